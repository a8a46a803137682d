"""'Fork from here' on a checkpoint page: the edit box, the diff shown before confirming (nothing changes until
then), CSRF, the operator role, and the branch shown on the source checkpoint's page."""

import json

import pytest
from django.test import Client
from django.urls import reverse

from harness.models import AuditEntry, Project
from runs_app.models import Checkpoint, Run
from runs_app.services import checkpoint_create
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def source(project: Project) -> Checkpoint:
    run = factories.make_run(project, factories.make_session(project, ref="S-f"), ref="R-f")
    return checkpoint_create(project=project, run_id=run.pk, label="drafted", state={"title": "A", "words": 900})


def _token(page: str) -> str:
    return page.split('name="csrfmiddlewaretoken" value="', 1)[1].split('"', 1)[0]


def test_the_operator_edits_sees_the_diff_then_confirms_and_the_branch_shows(source: Checkpoint, operator) -> None:  # type: ignore[no-untyped-def]
    client = Client(enforce_csrf_checks=True)
    client.force_login(operator)
    page_url = reverse("runs:checkpoint_detail", args=[source.pk])
    page = client.get(page_url).content.decode()
    assert 'id="fork-form"' in page and 'id="fork-preview"' in page
    fork_url = reverse("runs:checkpoint_fork", args=[source.pk])
    edited = json.dumps({"title": "B", "words": 900, "tone": "dry"})
    runs = Run.objects.count()

    assert client.post(fork_url, {"reason": "shorter", "state": edited}).status_code == 403  # no CSRF token
    preview = client.post(fork_url, {"reason": "shorter", "state": edited, "csrfmiddlewaretoken": _token(page)})

    body = preview.content.decode()
    assert preview.status_code == 200 and 'id="fork-diff"' in body and 'id="fork-confirm"' in body
    assert "+ tone: &quot;dry&quot;" in body and "~ title: &quot;A&quot; → &quot;B&quot;" in body
    assert Run.objects.count() == runs  # the preview changes nothing

    done = client.post(fork_url, {"reason": "shorter", "state": edited, "confirm": "True",
                                  "csrfmiddlewaretoken": _token(body)})
    fork = Checkpoint.objects.get(parent=source)
    assert done.status_code == 302 and done["Location"] == reverse("runs:run_inspector", args=[fork.run_id])
    assert fork.state == {"title": "B", "words": 900, "tone": "dry"} and fork.run_id != source.run_id
    assert AuditEntry.objects.get(action="checkpoint.forked").actor == "user:otto"
    branch = client.get(page_url).content.decode()
    assert f"#{fork.pk}" in branch and "<strong>fork</strong>" in branch


def test_a_bad_state_is_refused_with_the_form_and_a_reviewer_cannot_fork(source: Checkpoint, operator_client,  # type: ignore[no-untyped-def]
                                                                          reviewer_client) -> None:
    fork_url = reverse("runs:checkpoint_fork", args=[source.pk])
    bad = operator_client.post(fork_url, {"reason": "x", "state": "[1, 2]"})
    assert bad.status_code == 400 and "The state is a JSON object." in bad.content.decode()
    page = reviewer_client.get(reverse("runs:checkpoint_detail", args=[source.pk])).content.decode()
    assert 'id="fork-form"' not in page and "Only operators fork runs." in page
    assert reviewer_client.post(fork_url, {"reason": "x", "state": "{}", "confirm": "True"}).status_code == 403
    assert not Checkpoint.objects.filter(parent=source).exists()


def test_another_projects_operator_gets_a_404(source: Checkpoint, other_project: Project, client_for) -> None:  # type: ignore[no-untyped-def]
    outsider = client_for(factories.make_user("oscar", role="operator", projects=[other_project]))
    response = outsider.post(reverse("runs:checkpoint_fork", args=[source.pk]),
                             {"reason": "x", "state": "{}", "confirm": "True"})
    assert response.status_code == 404 and not Checkpoint.objects.filter(parent=source).exists()
