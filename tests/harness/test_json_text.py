"""harness.db.fetch_json_text hands a statement's text as PostgreSQL's UTF-8 bytes; id_list / id_list_sql pass a
list of ids as one text."""

import pytest

from harness.db import fetch_json_text, id_list, id_list_sql

pytestmark = pytest.mark.django_db


def test_a_text_comes_back_as_its_utf8_bytes_and_no_row_or_null_as_none() -> None:
    assert fetch_json_text("SELECT %(t)s::text", {"t": '{"a":"ü — \\"q\\""}'}) == '{"a":"ü — \\"q\\""}'.encode()
    assert fetch_json_text("SELECT 'x'::text WHERE false AND %(t)s::text IS NULL", {"t": None}) is None
    assert fetch_json_text("SELECT NULL::text WHERE %(t)s::text IS NULL", {"t": None}) is None


def test_an_id_list_is_the_bigint_array_it_stands_for() -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        for ids in ([], [7], [3, 1, 2**40]):
            cursor.execute(f"SELECT {id_list_sql('ids')}", {"ids": id_list(ids)})
            assert cursor.fetchone()[0] == ids
    with pytest.raises(ValueError, match="invalid literal"):
        id_list(["1,2"])  # type: ignore[list-item]  # only integers: a comma could not smuggle in another id
