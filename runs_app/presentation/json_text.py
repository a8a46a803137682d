"""JSON values as the console's pages show them: indented, keys sorted, non-ASCII as it is (the template escapes
the text)."""

import json
from typing import Any


def pretty(value: Any) -> str:
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False, default=str)
