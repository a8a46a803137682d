"""Paging long lists at a cost that does not grow with them: keyset (seek) cursors and their windows, and
counts capped at COUNT_CAP (the runs list, the approval inbox and the audit log share them).
"""

import datetime as dt
import re
from collections.abc import Callable
from typing import TypeVar

from django.db.models import Model, QuerySet

from harness.db import EPOCH

COUNT_CAP = 1000


def capped_count(qs: QuerySet[Model], cap: int = COUNT_CAP) -> int:
    """How many rows, counting at most `cap + 1`: a number above `cap` reads as "cap+".

    An exact total of a large list is a scan of all of it on every page view; a LIMIT'ed subquery
    stops at the cap, so the cost does not grow with the table.
    """
    return qs.order_by().values("pk")[: cap + 1].count()


MAX_SEEK_BRANCHES = 50  # beyond this many projects one sorted statement is cheaper than the UNION


def seek_cursor(created_at: dt.datetime, pk: int) -> str:
    """A (created_at, id) position as URL text: epoch microseconds and the id."""
    delta = created_at - EPOCH
    return f"{(delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds}.{pk}"


def parse_seek_cursor(text: str | None) -> tuple[dt.datetime, int] | None:
    match = re.fullmatch(r"(-?\d{1,20})\.(\d{1,20})", text or "")
    if match is None:
        return None
    return EPOCH + dt.timedelta(microseconds=int(match[1])), int(match[2])


Row = TypeVar("Row", bound=Model)


def seek_window(rows: list[Row], *, size: int, backwards: bool, came_from: tuple[dt.datetime, int] | None,
                position: Callable[[Row], tuple[dt.datetime, int]]) -> tuple[list[Row], str | None, str | None]:
    """A seek's rows (`size` + 1 fetched from the cursor `came_from`, walking back when `backwards`) as a
    window in the list's order, with the cursor onward along that order and the one back towards its
    start (None: nothing there). The extra row says there is more in the direction of travel; a cursor,
    that there is something on the side it came from."""
    more = len(rows) > size
    rows = rows[:size]
    if backwards:
        rows.reverse()
    first = seek_cursor(*position(rows[0])) if rows else None
    last = seek_cursor(*position(rows[-1])) if rows else None
    has_back = more if backwards else came_from is not None
    has_onward = came_from is not None if backwards else more
    return rows, last if has_onward else None, first if has_back else None
