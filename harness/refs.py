"""A client-chosen `ref`, unique in its project (a session's, a task's, a run's): a taken one answered, not a 500."""

from collections.abc import Callable
from typing import TypeVar

from django.db import IntegrityError, transaction
from django.db.models import Model

from harness.http.errors import ConflictError

_M = TypeVar("_M", bound=Model)


def create_with_ref(model: type[_M], create: Callable[[], _M], *, project_id: int, ref: str, constraint: str) -> _M:
    """`create()`, the INSERT of a row whose `ref` is unique in its project (`constraint`), in a savepoint.

    The savepoint keeps the caller's transaction usable after the unique violation of a taken ref (the
    Idempotency-Key's transaction, which runs the view: the violation used to abort it, and the keyed request
    answered an HTML 500). The taken ref is answered 409 `already_exists` with the existing row's `id`
    (committed by the racing request this INSERT waited on, so a new statement sees it), for the caller to use.
    """
    try:
        with transaction.atomic():
            return create()
    except IntegrityError as exc:
        if not ref or getattr(getattr(exc.__cause__, "diag", None), "constraint_name", None) != constraint:
            raise
        existing = model._default_manager.filter(project_id=project_id, ref=ref).values_list("pk", flat=True).first()
        raise ConflictError(f"A {model._meta.verbose_name} with the ref {ref!r} exists already (id {existing}).",
                            code="already_exists", id=existing, ref=ref) from None
