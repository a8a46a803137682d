"""The API's JSON rendering and content negotiation: DRF's, with the common case done in fewer steps.

Every API reply goes through both, so each keeps DRF's answer and only takes a shorter way to it
(bench/cpu_per_request.py measured the CPU; tests/api/test_json_codec.py holds each to DRF's answers):

- `JSONRenderer` writes the body with orjson (about a twentieth of the CPU of `json.dumps` with DRF's encoder on
  a 1 KB reply), values orjson does not know through DRF's encoder (dates as DRF writes them, decimals, lazy
  text), \\u2028 and \\u2029 escaped as DRF escapes them. Anything orjson refuses (an integer past 64 bits, a
  key that is not text) and any indented rendering go to DRF's renderer. Two differences, neither reachable
  by a value a client sent or the database holds in a reply: a float may be written in another form of the
  same number (`1e-7` where json writes `1e-07`, `0.00006103515625` where it writes `6.103515625e-05`), and a
  non-finite float (which the parser refuses and jsonb cannot store) is written `null` where DRF's renderer
  raised.
- `ContentNegotiation` answers a request that names no format and accepts anything (`*/*`, or no Accept
  header) or exactly the one renderer's media type, with that renderer, as DRF's negotiation would, without
  parsing the Accept header; any other request is negotiated by DRF.
"""

from collections.abc import Iterable, Mapping
from typing import Any

import orjson
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BaseRenderer
from rest_framework.renderers import JSONRenderer as DrfJSONRenderer
from rest_framework.request import Request
from rest_framework.settings import api_settings
from rest_framework.utils.encoders import JSONEncoder as _DrfEncoder

_LINE_SEPARATOR, _PARAGRAPH_SEPARATOR = "\u2028".encode(), "\u2029".encode()
_encode_other = _DrfEncoder().default


class JSONRenderer(DrfJSONRenderer):
    def render(self, data: Any, accepted_media_type: str | None = None,
               renderer_context: Mapping[str, Any] | None = None) -> bytes:
        if data is None:
            return b""
        indented = (accepted_media_type and "indent" in accepted_media_type) or \
            (renderer_context or {}).get("indent") is not None
        if indented:
            return super().render(data, accepted_media_type, renderer_context)  # pretty-printed: DRF's
        try:
            body = orjson.dumps(data, default=_encode_other, option=orjson.OPT_PASSTHROUGH_DATETIME)
        except TypeError:  # orjson.JSONEncodeError is one: what orjson cannot write, DRF writes or refuses
            return super().render(data, accepted_media_type, renderer_context)
        if _LINE_SEPARATOR in body or _PARAGRAPH_SEPARATOR in body:
            body = body.replace(_LINE_SEPARATOR, b"\\u2028").replace(_PARAGRAPH_SEPARATOR, b"\\u2029")
        return body


class ContentNegotiation(DefaultContentNegotiation):
    def select_renderer(self, request: Request, renderers: Iterable[BaseRenderer],
                        format_suffix: str | None = None) -> tuple[BaseRenderer, str]:
        listed = list(renderers)
        if len(listed) == 1 and not format_suffix:
            accept = request.META.get("HTTP_ACCEPT", "*/*")
            media_type = listed[0].media_type
            if media_type and (accept == "*/*" or accept == media_type) and \
                    api_settings.URL_FORMAT_OVERRIDE not in request.query_params:
                return listed[0], media_type
        chosen: tuple[BaseRenderer, str] = super().select_renderer(request, listed, format_suffix)
        return chosen
