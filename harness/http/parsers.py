"""The API's JSON parser: DRF's, plus refusing what PostgreSQL cannot store.

jsonb refuses `\\u0000`, UTF-8 cannot encode a lone surrogate, and `1e999` parses to infinity which
jsonb refuses too. Each would otherwise surface as a database error (a 500) deep inside a service.

A UTF-8 body is parsed by orjson first (about a tenth of the CPU of DRF's `json.load` through a codecs reader:
bench/cpu_per_request.py); whatever orjson refuses, and any body where the two could read a value differently,
goes to DRF's parser, which accepts or words the error exactly as before (tests/api/test_json_codec.py).
"""

import codecs
import io
import math
import re
from collections.abc import Mapping
from typing import Any

import orjson
from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

# orjson reads an integer literal past 64 bits as a float (json keeps it exact): a body with a run of 19 digits
# anywhere (in a string too, which only costs the slower parse) goes to json.
_LONG_DIGITS = re.compile(rb"[0-9]{19}")


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


def is_utf8(charset: Any) -> bool:
    """Whether a body in this charset (None: DEFAULT_CHARSET) is decoded as UTF-8; any other charset, or one that
    is none, DRF's parser decodes or refuses as before."""
    try:
        return codecs.lookup(charset or settings.DEFAULT_CHARSET).name == "utf-8"
    except (LookupError, TypeError):
        return False


def _utf8(parser_context: Mapping[str, Any] | None) -> bool:
    return is_utf8((parser_context or {}).get("encoding"))


# What parse_plain answers for a body it leaves to the parser below.
NOT_PLAIN: Any = object()


def parse_plain(raw: bytes) -> Any:
    """The value of a UTF-8 JSON body that orjson reads as json would and jsonb can store; NOT_PLAIN for any other
    body, which StrictJSONParser accepts or refuses (the plain path, harness.http.plain, hands it over)."""
    if _LONG_DIGITS.search(raw) is not None:
        return NOT_PLAIN  # an integer orjson may not keep exact
    try:
        data = orjson.loads(raw)
    except ValueError:  # orjson.JSONDecodeError is one
        return NOT_PLAIN
    return NOT_PLAIN if find_unstorable(data) is not None else data


class StrictJSONParser(JSONParser):
    def parse(self, stream: Any, media_type: str | None = None, parser_context: Mapping[str, Any] | None = None
              ) -> Any:
        if _utf8(parser_context):
            raw = stream.read()
            data = parse_plain(raw)
            if data is not NOT_PLAIN:
                return data
            # DRF's parser answers as it always did; what it accepts is checked for jsonb below.
            data = super().parse(io.BytesIO(raw), media_type, parser_context)
        else:
            data = super().parse(stream, media_type, parser_context)
        problem = find_unstorable(data)
        if problem:
            raise ParseError(problem)
        return data
