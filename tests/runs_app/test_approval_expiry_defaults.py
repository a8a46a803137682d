"""A project's default wait for approval requests, per tool and risk level: the most specific applies, an
agent's own deadline wins, another project's defaults do not apply, and the recovery pass expires them."""

import datetime as dt

import pytest
from django.utils import timezone

from harness.actors import Actor
from runs_app.models import ApprovalExpiryDefault, ApprovalStatus, RunStatus
from runs_app.services import approval_expire_due, approval_request_create, run_transition
from tests import factories

pytestmark = pytest.mark.django_db


def _ask(project, tool: str, risk: str, **kwargs):  # type: ignore[no-untyped-def]
    run = factories.make_run(project, factories.make_session(project))
    run_transition(project=project, run_id=run.pk, to=RunStatus.RUNNING, expected_version=None)
    return approval_request_create(project=project, run_id=run.pk, tool=tool, arguments={}, risk=risk,
                                   idempotency_key=f"k-{run.pk}", actor=Actor.for_agent("coder"), **kwargs)


def _waits(approval) -> dt.timedelta:  # type: ignore[no-untyped-def]
    return approval.expires_at - approval.created_at


def test_the_most_specific_default_applies(project, other_project) -> None:  # type: ignore[no-untyped-def]
    hour = dt.timedelta(hours=1)
    for tool, risk, hours in [("", "high", 4), ("", "", 24), ("git.push", "", 2), ("git.push", "high", 1)]:
        ApprovalExpiryDefault.objects.create(project=project, tool=tool, risk=risk, expires_after=hours * hour)
    ApprovalExpiryDefault.objects.create(project=other_project, tool="", risk="low", expires_after=hour / 60)

    assert abs(_waits(_ask(project, "git.push", "high")) - 1 * hour) < dt.timedelta(minutes=1)
    assert abs(_waits(_ask(project, "git.push", "low")) - 2 * hour) < dt.timedelta(minutes=1)
    assert abs(_waits(_ask(project, "mail.send", "high")) - 4 * hour) < dt.timedelta(minutes=1)
    assert abs(_waits(_ask(project, "mail.send", "low")) - 24 * hour) < dt.timedelta(minutes=1)
    assert _ask(other_project, "mail.send", "high").expires_at is None  # no default of its own applies


def test_the_agents_own_deadline_wins_and_the_default_expires_like_any(project) -> None:  # type: ignore[no-untyped-def]
    ApprovalExpiryDefault.objects.create(project=project, risk="high", expires_after=dt.timedelta(hours=4))
    own = timezone.now() + dt.timedelta(days=3)
    assert _ask(project, "mail.send", "high", expires_at=own).expires_at == own
    defaulted = _ask(project, "mail.send", "high")
    assert approval_expire_due(now=timezone.now() + dt.timedelta(hours=5)) == [defaulted.pk]
    defaulted.refresh_from_db()
    assert defaulted.status == ApprovalStatus.EXPIRED
