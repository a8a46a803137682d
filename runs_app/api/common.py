"""What the runs app's API views share: the input helpers (`validated`, RenamedInSerializer), the fields every
write to a run or a compare-and-set door declares alike (lease_owner_field, expected_version_field), and RunReachable,
the door a token narrowed to one end user takes to a run."""

from typing import Any, ClassVar

from rest_framework import serializers

from harness.http.api_base import ReachedFirst, VersionField
from harness.http.body import InSerializer
from harness.http.errors import NotFoundError
from harness.models import Project
from harness.tenancy import EndUserScope
from runs_app.models import FailureCategory
from runs_app.selectors.runs import run_reachable

TEXT_MAX = 20_000


def validated(serializer_class: type[serializers.Serializer[None]], data: Any) -> dict[str, Any]:
    serializer = serializer_class(data=data)
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)


class RenamedInSerializer(InSerializer):
    # An input serializer with a field whose JSON name (`data`, `parent`, `label`) is an attribute of
    # Serializer or Field: declared under another Python name, it takes its JSON name here, in its place
    # (`json_names`: Python name -> JSON name). Its source is the JSON name, so validated_data has that key.
    # (No docstring: the schema would show it as the description of every serializer built on it.)

    json_names: ClassVar[dict[str, str]] = {}

    def get_fields(self) -> dict[str, serializers.Field[Any, Any, Any, Any]]:
        return {self.json_names.get(name, name): field for name, field in super().get_fields().items()}


LEASE_OWNER_HELP = (
    "Who writes: the lease owner you claimed the run with, or null (or omitted) if you hold no lease. A run that "
    "holds a lease (claimed and not released, even if it has expired) refuses a write that names no owner or "
    "another one: 409 lease_lost, nothing written. A run with no lease takes a write that names none.")


def lease_owner_field() -> serializers.CharField:
    """The `lease_owner` of every write a lease holder makes to a run (runs_app.fencing)."""
    return serializers.CharField(max_length=200, required=False, allow_null=True, default=None,
                                 help_text=LEASE_OWNER_HELP)


def expected_version_field(what: str, optional_because: str = "") -> serializers.IntegerField:
    """The `expected_version` of a compare-and-set door: required, or optional with the reason in the schema."""
    if not optional_because:
        return VersionField(help_text=f"The {what}'s version you read: a stale one is refused 409 version_conflict, "
                                 "nothing written.")
    return VersionField(required=False, allow_null=True, default=None,
                   help_text=f"The {what}'s version you read: a stale one is refused 409 version_conflict, nothing "
                             f"written. Optional: {optional_because}")


FAILURE_CATEGORY_HELP = f"Why it failed or blocked: one of {', '.join(FailureCategory.values)}, or empty."


# --- the doors a token narrowed to one end user may use (issue 30) --------------------------------------
# A LangGraph graph serving one end user (harness_client.langgraph.HarnessSaver(end_user=...)) reads its thread's
# run, reports its model calls' usage, asks for approvals and reads their decisions. Those views admit a narrowed
# token (`narrowed_token_allowed`, harness.http.permissions) and confine it to the runs of its user's sessions (and its
# one session, when the token names one): another user's run, and its approvals, are absent (404), as another
# project's are. Every other run, checkpoint, effect and task door stays closed to it (403 narrowed_token_scope).


class RunReachable(ReachedFirst):
    """Admits a narrowed token and, on `runs/<pk>/...`, finds the run among its user's first (404 otherwise)."""

    def reach(self, *, project_ids: list[int], pk: int, end_user: EndUserScope | None) -> None:
        run_reachable(project_ids=project_ids, run_id=pk, end_user=end_user)


class NothingInSerializer(InSerializer):
    """A body that takes no field (a revoke, a withdrawal): an unknown one is refused (400 `unknown_field`)."""


def scoped_project(request: Any, slug: str) -> Project:
    """The project a person's write names by slug, among those the caller can see (404 otherwise: another
    project's slug answers as a missing one)."""
    from harness.http.api_base import scope

    project = Project.objects.filter(slug=slug, pk__in=scope(request)).first()
    if project is None:
        raise NotFoundError("This project does not exist.")
    return project
