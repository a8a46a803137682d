"""TextJSONField: a JSONField stored as PostgreSQL `json` (the text as written) rather than `jsonb`.

Reading a jsonb value as text makes PostgreSQL write it out again from its binary tree (jsonb_out, escaping every
string a character at a time); a json value is its text, copied. For a column that is written once and read back
whole, never searched by its content, that is most of what a read of it costs the server: the checkpoints' cursor,
state, fingerprints and pending gate, of which the lineage read (issue 14, bench scenario H4) sends a thousand at a
time (runs_app/migrations/0024_checkpoint_json_as_written.py has the figures).

What json gives up, and why these columns do not need it: no jsonb operators (`@>`, `?`, key lookups compared with
`=`), no GIN index, no equality (so no DISTINCT, GROUP BY or UNION over the column); nothing queries these columns by
their content, and a content hash is always taken over harness.canonical's text, never the stored one. What it
keeps that jsonb did not: the keys in the order written (jsonb sorts them by length, then bytes), duplicate keys,
and a number's digits as written (jsonb writes 1e+16 back as 10000000000000000). The service writes the JSON text
Python's json.dumps gives (`dumps` below: the default separators, non-ASCII as it is, which is how jsonb wrote its
text), so a read returns the value written, in its order. What jsonb refuses (`\\u0000`, a lone surrogate) the API
refuses before it is written (harness.http.parsers).

Django registers psycopg's TextLoader for jsonb only, so that its JSONField decodes the text itself
(`from_db_value`); `register_text_json_loader` does the same for json on every connection Django opens (connected
in harness.apps), or psycopg would hand the field a decoded value, and a JSON string such as "123" could not be
told from the text 123. A raw statement's json result comes back as its text too, as a jsonb one always did.
"""

import json
from typing import Any

from django.db import models
from django.db.backends.base.base import BaseDatabaseWrapper
from psycopg.types.json import Json
from psycopg.types.string import TextLoader


def dumps(value: Any) -> str:
    """The JSON text written to a TextJSONField's column (and by the services' own statements)."""
    return json.dumps(value, ensure_ascii=False)


class TextJSONField(models.JSONField):
    """A JSONField whose column is PostgreSQL `json`: its text kept as written, read back without re-serialising."""

    description = "A JSON value, stored as its text (PostgreSQL json)"

    def db_type(self, connection: BaseDatabaseWrapper) -> str:
        return "json"

    def cast_db_type(self, connection: BaseDatabaseWrapper) -> str:
        return "json"

    def get_db_prep_value(self, value: Any, connection: BaseDatabaseWrapper, prepared: bool = False) -> Any:
        if not prepared:
            value = self.get_prep_value(value)
        if self.encoder is None:
            return Json(value, dumps=dumps)
        encoder = self.encoder
        return Json(value, dumps=lambda v: json.dumps(v, cls=encoder, ensure_ascii=False))

    def from_db_value(self, value: Any, expression: Any, connection: BaseDatabaseWrapper) -> Any:
        if value is None or not isinstance(value, str):
            return value
        return json.loads(value, cls=self.decoder)


def register_text_json_loader(sender: Any, connection: BaseDatabaseWrapper, **kwargs: Any) -> None:
    """connection_created's receiver: json results as their text, as Django has psycopg give jsonb ones."""
    if connection.vendor == "postgresql":
        connection.connection.adapters.register_loader("json", TextLoader)
