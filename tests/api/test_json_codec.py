"""The API's shorter ways through JSON (issue 14) give DRF's answers: the orjson parse (harness.http.parsers), the
orjson rendering and the negotiation's common case (harness.http.renderers), and the depth check's bracket count
(harness.http.middleware). Each is run beside DRF's own path on the same inputs, bad ones included."""

import datetime as dt
import decimal
import io
import json
import math
from typing import Any

import pytest
from django.test import RequestFactory
from django.utils.translation import gettext_lazy
from hypothesis import example, given, settings
from hypothesis import strategies as st
from rest_framework.exceptions import NotAcceptable, ParseError
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.parsers import JSONParser
from rest_framework.renderers import JSONRenderer as DrfJSONRenderer
from rest_framework.request import Request

from harness.http.middleware import _may_nest_deeper, json_depth
from harness.http.parsers import StrictJSONParser, find_unstorable
from harness.http.renderers import ContentNegotiation, JSONRenderer

# --- parsing --------------------------------------------------------------------------------------------


def _answer(parse: Any, raw: bytes, encoding: str = "utf-8") -> tuple[str, Any]:
    try:
        return "ok", parse(io.BytesIO(raw), "application/json", {"encoding": encoding})
    except ParseError as refused:
        return "refused", str(refused.detail)


def _drf(stream: Any, media_type: str, context: dict[str, Any]) -> Any:
    """What the parser did before orjson: DRF's parse, then the storability check."""
    data = JSONParser().parse(stream, media_type, context)
    problem = find_unstorable(data)
    if problem:
        raise ParseError(problem)
    return data


def _typed(value: Any) -> Any:
    """The value with every number's type beside it: 1 and 1.0 (and True) compare equal in Python, not in JSON."""
    if isinstance(value, dict):
        return {key: _typed(child) for key, child in value.items()}
    if isinstance(value, list):
        return [_typed(child) for child in value]
    if isinstance(value, float) and math.isnan(value):
        return ("nan",)
    return (type(value).__name__, value)


def _same(raw: bytes, encoding: str = "utf-8") -> None:
    ours, drf = _answer(StrictJSONParser().parse, raw, encoding), _answer(_drf, raw, encoding)
    assert (ours[0], _typed(ours[1])) == (drf[0], _typed(drf[1])), raw


HOSTILE = [
    b"", b"{nope", b"[1,]", b"NaN", b"[Infinity]", b"-Infinity", b"1e999", b"[-1e999]", b'"\\u0000"', b'{"\\u0000": 1}',
    b'"\\ud800"', b'"\\udc00x"', b'["\\ud83d\\ude00"]', b'"\xff"', b"\xef\xbb\xbf{}", b'"a\tb"', b"[1] x", b"01",
    b"18446744073709551615", b"18446744073709551616", b"-9223372036854775808", b"-9223372036854775809",
    b'{"n": 123456789012345678901234567890}', b'"12345678901234567890"', b"1.5e-400", b"-0", b"-0.0", b"1E2",
    b'{"a": 1, "a": 2}', b"  [true, false, null]  ", b'"\xe2\x80\xa8"', b"[" * 40 + b"]" * 40, b"0.1", b"1e-7",
]


@pytest.mark.parametrize("raw", HOSTILE)
def test_hostile_and_odd_bodies_are_parsed_or_refused_as_drf_did(raw: bytes) -> None:
    _same(raw)


@pytest.mark.parametrize("encoding", ["latin-1", "utf-16", "bz2_codec", "no-such-charset", "UTF8", "utf-8-sig"])
def test_other_charsets_are_decoded_or_refused_as_drf_did(encoding: str) -> None:
    _same(b'{"text": "caf\xc3\xa9"}', encoding)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(json_values, st.booleans())
@example({"items": [{"role": "user", "content": {"text": "x" * 1000}}]}, False)
def test_any_json_text_is_read_as_drf_read_it(value: Any, ascii_only: bool) -> None:
    _same(json.dumps(value, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass"))


# --- rendering ------------------------------------------------------------------------------------------


def _rendered(renderer: Any, data: Any, media_type: str | None = "application/json") -> tuple[str, Any]:
    try:
        return "ok", renderer.render(data, media_type, {})
    except (TypeError, ValueError) as refused:
        return "refused", type(refused).__name__


def _floats(value: Any) -> bool:
    if isinstance(value, dict):
        return any(_floats(child) for child in value.values())
    if isinstance(value, list):
        return any(_floats(child) for child in value)
    return isinstance(value, float)


finite_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(finite_values)
@example({"text": "line\u2028paragraph\u2029end", "big": 2**64, "small": -(2**63) - 1})
@example({"exponent": 1e-7, "large": 1e16})
@example({"positional": 6.103515625e-05})  # orjson writes it positionally, Python with an exponent
def test_any_reply_is_rendered_as_drf_rendered_it(data: Any) -> None:
    ours, drf = _rendered(JSONRenderer(), data), _rendered(DrfJSONRenderer(), data)
    assert ours[0] == drf[0]
    if ours[0] == "ok" and ours[1] != drf[1]:
        # Only a float may be written differently (1e-7 for 1e-07, 0.00006103515625 for 6.103515625e-05): the
        # same number of the same JSON type, so every client reads the same value.
        assert _floats(data)
        assert _typed(json.loads(ours[1])) == _typed(json.loads(drf[1]))


def test_values_only_drfs_encoder_knows_are_written_by_it() -> None:
    data = {
        "at": dt.datetime(2026, 12, 1, 16, 0, 0, 123456, tzinfo=dt.UTC),
        "naive": dt.datetime(2026, 1, 2, 3, 4, 5),  # noqa: DTZ001 - DRF writes a naive one too
        "day": dt.date(2026, 12, 1), "time": dt.time(10, 11, 12), "span": dt.timedelta(seconds=90),
        "amount": decimal.Decimal("1.50"), "lazy": gettext_lazy("Pending"), "set": {1}, "tuple": (1, "a"),
        "bytes": b"raw", 1: "an int key",
    }
    for key in list(data):
        one = {key: data[key]}
        assert _rendered(JSONRenderer(), one) == _rendered(DrfJSONRenderer(), one), key
    assert _rendered(JSONRenderer(), data) == _rendered(DrfJSONRenderer(), data)


@pytest.mark.parametrize("media_type", ["application/json; indent=4", "application/json; indent=0", None])
def test_indented_and_unnamed_renderings_are_drfs(media_type: str | None) -> None:
    data = {"a": [1, {"b": "c"}]}
    assert _rendered(JSONRenderer(), data, media_type) == _rendered(DrfJSONRenderer(), data, media_type)
    assert JSONRenderer().render(None) == DrfJSONRenderer().render(None) == b""


def test_a_non_finite_float_is_the_one_value_written_differently() -> None:
    # No reply can hold one: the parser refuses them and jsonb cannot store them. DRF's renderer raised (a 500);
    # orjson writes null (harness.http.renderers says so).
    assert _rendered(DrfJSONRenderer(), {"x": math.inf}) == ("refused", "ValueError")
    assert _rendered(JSONRenderer(), {"x": math.inf}) == ("ok", b'{"x":null}')


# --- negotiation ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("accept", [None, "*/*", "application/json", "application/json; indent=4", "application/*",
                                    "text/html", "text/html, */*;q=0.1", "", "application/xml"])
@pytest.mark.parametrize("query", ["", "format=json", "format=xml", "limit=5"])
def test_the_negotiation_answers_as_drfs(accept: str | None, query: str) -> None:
    headers = {} if accept is None else {"HTTP_ACCEPT": accept}
    request = Request(RequestFactory().get(f"/api/v1/sessions/?{query}", **headers))

    def answer(negotiation: Any) -> Any:
        try:
            renderer, media_type = negotiation.select_renderer(request, [JSONRenderer()])
            return type(renderer), media_type
        except NotAcceptable:
            return "406"
        except Exception as other:  # noqa: BLE001 - DRF's 404 for an unknown ?format=
            return type(other).__name__

    assert answer(ContentNegotiation()) == answer(DefaultContentNegotiation())


# --- the depth check's bracket count --------------------------------------------------------------------


@given(st.recursive(st.integers() | st.text(alphabet="[]{}\"\\x"),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=2), inner,
                                                                                  max_size=3), max_leaves=40),
       st.integers(0, 8))
@settings(max_examples=300, deadline=None)
def test_the_bracket_count_never_spares_a_body_that_nests_too_deep(value: Any, max_depth: int) -> None:
    body = json.dumps(value).encode()
    if json_depth(body, stop_above=max_depth) > max_depth:
        assert _may_nest_deeper(body, max_depth)
