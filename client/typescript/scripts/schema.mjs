#!/usr/bin/env node
// Regenerates src/schema.ts, the client's types, from the server's OpenAPI schema (`manage.py spectacular`).
//
//   npm --prefix client/typescript run schema            write src/schema.ts from the checkout's current schema
//   npm --prefix client/typescript run schema -- --check  fail (exit 1) when src/schema.ts is not what it would write
//
// The schema comes from the checkout's own `manage.py spectacular` (its .venv's Python, or $PYTHON), so no
// server needs to run; openapi-typescript is pinned in package.json. tests/client/test_typescript.py runs the
// --check form: a server change that alters the API fails the suite until this command is run again.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import openapiTS, { astToString } from "openapi-typescript";

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, "..", "..", "..");
const target = join(here, "..", "src", "schema.ts");
const check = process.argv.includes("--check");

const venvPython = join(root, ".venv", "bin", "python");
const python = process.env.PYTHON || (existsSync(venvPython) ? venvPython : "python3");
// Printing the schema needs no database; DEBUG=1 lets manage.py start without a SECRET_KEY (as bin/start does).
const env = { ...process.env };
if (!env.SECRET_KEY) env.DEBUG = "1";
const json = execFileSync(python, [join(root, "manage.py"), "spectacular", "--format", "openapi-json"],
  { cwd: root, env, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });

// defaultNonNullable off: a request field with a server-side default stays optional (the *Request schemas);
// every answer's field is in its schema's `required` list already.
const ast = await openapiTS(JSON.parse(json), { defaultNonNullable: false });
const header = [
  "// The Harness Console API's types, generated from its OpenAPI schema by openapi-typescript: do not edit.",
  "// Regenerate with `npm --prefix client/typescript run schema` (tests/client/test_typescript.py checks it).",
  "",
].join("\n");
const text = header + astToString(ast);

if (check) {
  const current = existsSync(target) ? readFileSync(target, "utf8") : "";
  if (current !== text) {
    console.error("client/typescript/src/schema.ts is out of date with the server's OpenAPI schema: run\n" +
      "  npm --prefix client/typescript run schema\nand commit the result.");
    process.exit(1);
  }
  console.log("client/typescript/src/schema.ts matches the server's OpenAPI schema");
} else {
  writeFileSync(target, text);
  console.log(`wrote ${target}`);
}
