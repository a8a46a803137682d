"""The API's JSON parser: DRF's, plus refusing what PostgreSQL cannot store.

jsonb refuses `\\u0000`, UTF-8 cannot encode a lone surrogate, and `1e999` parses to infinity which
jsonb refuses too. Each would otherwise surface as a database error (a 500) deep inside a service.
"""

import math
from collections.abc import Mapping
from typing import Any

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser


def _storable_text(value: str) -> bool:
    if "\x00" in value:
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def find_unstorable(value: Any) -> str | None:
    """Why `value` cannot go into jsonb/text columns, or None. Iterative: depth is capped upstream anyway."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if not _storable_text(item):
                return "Text may not contain NUL characters or lone surrogates."
        elif isinstance(item, float):
            if not math.isfinite(item):
                return "Numbers must be finite."
        elif isinstance(item, Mapping):
            for key, child in item.items():
                if not _storable_text(key):
                    return "Keys may not contain NUL characters or lone surrogates."
                stack.append(child)
        elif isinstance(item, list):
            stack.extend(item)
    return None


class StrictJSONParser(JSONParser):
    def parse(self, stream: Any, media_type: str | None = None, parser_context: Mapping[str, Any] | None = None
              ) -> Any:
        data = super().parse(stream, media_type, parser_context)
        problem = find_unstorable(data)
        if problem:
            raise ParseError(problem)
        return data
