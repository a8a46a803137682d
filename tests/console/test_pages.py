"""Every console page renders for a member, shows the agent's values escaped, and links as plain links."""

import pytest
from django.urls import reverse

from tests.console.scenario import Scene

pytestmark = pytest.mark.django_db


def page_urls(scene: Scene) -> list[str]:
    a, b = scene.checkpoints[1], scene.checkpoints[3]
    return [
        reverse("dashboard"),
        reverse("runs:approval_inbox"),
        reverse("runs:approval_detail", args=[scene.approval.pk]),
        reverse("runs:run_inspector", args=[scene.run.pk]),
        reverse("runs:run_lineage", args=[scene.run.pk]),
        reverse("runs:task_lineage", args=[scene.task.pk]),
        reverse("runs:checkpoint_detail", args=[a.pk]),
        reverse("runs:checkpoint_diff") + f"?a={a.pk}&b={b.pk}",
        reverse("sessions:session_list"),
        reverse("sessions:session_timeline", args=[scene.session.pk]),
        reverse("memory:record_list"),
        reverse("memory:record_detail", args=[scene.memory.pk]),
        reverse("memory:record_delete", args=[scene.memory.pk]),
        reverse("memory:held_list"),
        reverse("pending_count"),
    ]


def test_every_page_renders_for_a_member(scene: Scene, reviewer_client) -> None:  # type: ignore[no-untyped-def]
    for url in page_urls(scene):
        response = reviewer_client.get(url)
        assert response.status_code == 200, (url, response.status_code)


def test_approval_detail_shows_what_a_reviewer_needs(scene: Scene, reviewer_client) -> None:  # type: ignore[no-untyped-def]
    body = reviewer_client.get(reverse("runs:approval_detail", args=[scene.approval.pk])).content.decode()
    assert "git.push" in body
    assert scene.approval.action_fingerprint in body
    assert "&quot;branch&quot;: &quot;fix/login&quot;" in body  # pretty-printed, escaped
    assert "agent:coder" in body
    assert "I need to push the patch" in body  # the session's recent items
    assert "patched" in body  # the latest checkpoint
    assert "Verify the approved fingerprint" in body  # what the resume will check
    assert 'id="approve"' in body and 'id="reject"' in body and 'id="edit-approve"' in body


def test_anonymous_users_are_sent_to_login(scene: Scene, client) -> None:  # type: ignore[no-untyped-def]
    for url in page_urls(scene):
        response = client.get(url)
        assert response.status_code == 302 and response["Location"].startswith("/login/"), url
