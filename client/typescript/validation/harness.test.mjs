// Run by vitest (the validation suite is written for it): `vitest run --root validation --globals`.
import { validate } from "@langchain/langgraph-checkpoint-validation";

import initializer from "./initializer.mjs";

validate(initializer);
