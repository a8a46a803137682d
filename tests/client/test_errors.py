"""The API's error shape, as the client's exceptions (live)."""

import pytest
from harness_client import (
    AuthenticationError,
    ConflictError,
    HarnessClient,
    HarnessError,
    NotFoundError,
    PermissionDenied,
    ValidationError,
)

from tests.client.conftest import Live, Recorder

pytestmark = pytest.mark.django_db(transaction=True)


def test_each_error_status_is_its_exception_with_the_code_and_detail(live: Live) -> None:
    recorder = Recorder()
    with live.client(transport=recorder) as hc:
        session = hc.create_session()
        run = hc.create_run(session=session.id)
        claimed = hc.claim_run(run.id, owner="worker-1", lease_seconds=60)

        with pytest.raises(NotFoundError) as missing:
            hc.get_run(987654321)
        assert (missing.value.status, missing.value.code) == (404, "not_found")
        assert "987654321" in missing.value.detail

        with pytest.raises(ConflictError) as held:
            hc.claim_run(run.id, owner="worker-2")
        assert (held.value.code, held.value.current_status, held.value.current_version) == (
            "lease_held", "created", claimed.version)
        assert held.value.body["lease_owner"] == "worker-1"

        with pytest.raises(ConflictError) as stale:
            hc.transition_run(run.id, "running", expected_version=claimed.version + 5, lease_owner="worker-1")
        assert (stale.value.current_status, stale.value.current_version) == ("created", claimed.version)

        with pytest.raises(ValidationError) as invalid:
            hc.transition_run(run.id, "flying", expected_version=claimed.version,  # type: ignore[arg-type]
                              lease_owner="worker-1")
        assert (invalid.value.status, invalid.value.code) == (400, "invalid") and "to" in invalid.value.fields

        with pytest.raises(ValidationError) as unknown:  # a mapping with a field an item does not take
            hc.append_items(session.id, [{"role": "user", "content": "hi", "seq": 5}])
        assert (unknown.value.status, unknown.value.code) == (400, "unknown_field")
        assert unknown.value.unknown_fields == ["items[0].seq"]
        assert hc.get_session(session.id).last_seq == 0

        with pytest.raises(ValidationError) as bad_filter:
            list(hc.list_runs(status="flying"))  # type: ignore[arg-type]
        assert "status" in bad_filter.value.fields

        hc.create_session(ref="a", request_key="same-key")
        with pytest.raises(ValidationError) as reused:
            hc.create_session(ref="b", request_key="same-key")
        assert (reused.value.status, reused.value.code) == (422, "idempotency_key_reused")

        with pytest.raises(ValidationError) as rejected:
            hc.propose_memory(scope="project", content="A fact from nowhere.")
        assert (rejected.value.status, rejected.value.code) == (422, "provenance_required")

        hc.transition_run(run.id, "running", expected_version=claimed.version, lease_owner="worker-1")
        approval = hc.request_approval(run.id, tool="send", idempotency_key="k-1", lease_owner="worker-1")
        with pytest.raises(PermissionDenied) as agents_do_not_decide:
            hc.decide_approval(approval.id, "approve", expected_version=approval.version)
        assert agents_do_not_decide.value.status == 403

    # None of these 4xx was retried: each request went out once.
    assert len(recorder.exchanges) == 16

    with HarnessClient(live.url, "hc_not-a-token") as stranger, pytest.raises(AuthenticationError) as denied:
        stranger.get_session(session.id)
    assert denied.value.status == 401 and isinstance(denied.value, HarnessError)
    assert str(denied.value).startswith("401 authentication_failed: ")


def test_another_projects_records_are_not_found(live: Live, hc: HarnessClient) -> None:
    from tests import factories

    other = factories.make_project("elsewhere")
    theirs = factories.make_session(other)
    with pytest.raises(NotFoundError):
        hc.get_session(theirs.pk)
    with pytest.raises(NotFoundError):
        hc.append_items(theirs.pk, [{"role": "user", "content": "x"}])
    with pytest.raises(NotFoundError):
        list(hc.list_items(theirs.pk))


def test_a_taken_ref_is_a_conflict_naming_the_existing_session(live: Live) -> None:
    with live.client() as hc:
        first = hc.create_session(ref="S-42")
        with pytest.raises(ConflictError) as taken:
            hc.create_session(ref="S-42")
        assert (taken.value.status, taken.value.code, taken.value.existing_id) == (409, "already_exists", first.id)
        with pytest.raises(ConflictError) as other:
            hc.transition_session(first.id, "terminated", expected_version=first.version + 5)
        assert other.value.existing_id is None
