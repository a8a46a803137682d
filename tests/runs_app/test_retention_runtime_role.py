"""Retention as the runtime role (the role bin/serve and bin/reliability run the application as): a pass run by
`manage.py retention` connected as `harness_app` removes run events and checkpoints through the prune function,
the one door past the history triggers, while the same role's own DELETE is still refused."""

import subprocess
import sys
import uuid

import psycopg
import pytest
from django.core.management import call_command
from django.db import connection

from harness.actors import Actor
from harness.models import AuditEntry
from runs_app.models import Checkpoint, Run, RunEvent, RunStatus
from runs_app.retention import retention_policy_set
from runs_app.services import checkpoint_create, run_event_append, run_transition
from tests import factories
from tests.subprocesses import ROOT, child_env

pytestmark = pytest.mark.django_db(transaction=True)

ROLE = "harness_app"


def _url_as(role: str) -> str:
    s = connection.settings_dict
    return f"postgres://{role}@{s.get('HOST') or '127.0.0.1'}:{s.get('PORT') or 5432}/{s['NAME']}"


def test_a_pass_as_the_runtime_role_prunes_history_only_through_the_prune_function() -> None:
    call_command("runtime_role", ROLE, "--create")
    project = factories.make_project(f"rr-{uuid.uuid4().hex[:8]}")
    run = factories.make_run(project)
    run_transition(project=project, run_id=run.pk, to=RunStatus.RUNNING, expected_version=None)
    for n in range(3):
        run_event_append(project=project, run_id=run.pk, kind="step", data={"n": n})
    base = checkpoint_create(project=project, run_id=run.pk, label="base")
    branch = checkpoint_create(project=project, run_id=run.pk, parent_id=base.pk, label="branch")
    last = checkpoint_create(project=project, run_id=run.pk, parent_id=base.pk, label="last")
    run_transition(project=project, run_id=run.pk, to=RunStatus.SUCCEEDED, expected_version=None)
    operator = factories.make_user("rr-operator", role="operator", projects=[project])
    retention_policy_set(project=project, actor=Actor.for_user(operator),
                         settings={"events_keep_last": 1, "checkpoints_keep_last": 0})

    with psycopg.connect(_url_as(ROLE), autocommit=True) as raw, raw.transaction():
        raw.execute("SET LOCAL harness.history_delete = 'on'")
        # It may delete checkpoints (a LangGraph thread's), but the trigger refuses these: not its door.
        with pytest.raises(psycopg.Error, match="refused"):
            raw.execute("DELETE FROM runs_app_checkpoint WHERE id = %s", [branch.pk])

    done = subprocess.run([sys.executable, "manage.py", "retention", "--project", project.slug], cwd=ROOT,
                          env=child_env(DATABASE_URL=_url_as(ROLE)), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert RunEvent.objects.filter(run=run).count() == 1
    assert set(Checkpoint.objects.filter(run=run).values_list("pk", flat=True)) == {base.pk, last.pk}
    assert not Checkpoint.objects.filter(pk=branch.pk).exists()
    assert AuditEntry.objects.filter(project=project, action="retention.pruned").count() == 1


def test_a_pass_as_the_runtime_role_removes_a_finished_run_which_the_role_cannot_delete_itself() -> None:
    call_command("runtime_role", ROLE, "--create")
    project = factories.make_project(f"rr-{uuid.uuid4().hex[:8]}")
    done, kept = factories.make_run(project), factories.make_run(project)
    for run in (done, kept):
        run_transition(project=project, run_id=run.pk, to=RunStatus.RUNNING, expected_version=None)
        run_event_append(project=project, run_id=run.pk, kind="step", data={})
        checkpoint_create(project=project, run_id=run.pk, label="last")
    run_transition(project=project, run_id=done.pk, to=RunStatus.SUCCEEDED, expected_version=None)
    operator = factories.make_user("rr-run-operator", role="operator", projects=[project])
    retention_policy_set(project=project, actor=Actor.for_user(operator), settings={"runs_keep_last": 0})

    # Not its door: no DELETE privilege on runs (harness.roles), and the owner's trigger besides.
    with psycopg.connect(_url_as(ROLE), autocommit=True) as raw, raw.transaction():
        raw.execute("SET LOCAL harness.history_delete = 'on'")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            raw.execute("DELETE FROM runs_app_run WHERE id = %s", [done.pk])

    done_pass = subprocess.run([sys.executable, "manage.py", "retention", "--project", project.slug], cwd=ROOT,
                               env=child_env(DATABASE_URL=_url_as(ROLE)), capture_output=True, text=True, timeout=120)
    assert done_pass.returncode == 0, done_pass.stderr
    assert "runs 1" in done_pass.stdout
    assert not Run.objects.filter(pk=done.pk).exists()
    assert not RunEvent.objects.filter(run_id=done.pk).exists() and not Checkpoint.objects.filter(run_id=done.pk)
    assert Run.objects.filter(pk=kept.pk).exists() and RunEvent.objects.filter(run_id=kept.pk).exists()
