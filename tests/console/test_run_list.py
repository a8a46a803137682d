"""The runs list (/runs/): every filter is a URL, counts per status, sorts, and keyset paging across projects."""

import datetime as dt
import re
from urllib.parse import urlencode

import pytest
from django.urls import reverse
from django.utils import timezone

from harness.actors import Actor
from runs_app.models import Run, RunStatus
from runs_app.selectors import runs as runs_sel
from runs_app.services import run_transition
from tests import factories

pytestmark = pytest.mark.django_db
URL = reverse("runs:run_list")


def shown(body: str) -> list[int]:
    return [int(pk) for pk in re.findall(r'data-run="(\d+)"', body)]


def listed(client, **params) -> list[int]:  # type: ignore[no-untyped-def]
    query = urlencode(params, doseq=True)
    response = client.get(f"{URL}?{query}")
    assert response.status_code == 200
    return shown(response.content.decode())


def _blocked(project, run: Run, step: str, reason: str) -> None:  # type: ignore[no-untyped-def]
    run_transition(project=project, run_id=run.pk, to=RunStatus.RUNNING, expected_version=None)
    run_transition(project=project, run_id=run.pk, to=RunStatus.BLOCKED, expected_version=None,
                   actor=Actor.for_worker("worker:test"), blocked_step=step, error={"reason": reason})


@pytest.fixture
def runs(project):  # type: ignore[no-untyped-def]
    session = factories.make_session(project, ref="S-1")
    other_session = factories.make_session(project, ref="S-2")
    task = factories.make_task(project, ref="T-1")
    made = {
        "plain": factories.make_run(project, session, ref="R-plain", active_agent="coder"),
        "tasked": factories.make_run(project, other_session, ref="R-tasked", task_id=task.pk, active_agent="tester"),
        "blocked": factories.make_run(project, session, ref="R-blocked", active_agent="coder"),
        "failing": factories.make_run(project, session, ref="R-failing"),
    }
    _blocked(project, made["blocked"], "approval_preconditions", "the fingerprint changed under the reviewer")
    Run.objects.filter(pk=made["failing"].pk).update(metrics={"failure_type": "tool_unreachable"},
                                                     failure_category="transient")
    return {"session": session, "task": task, **made}


def test_each_filter_is_a_query_parameter(runs, reviewer_client) -> None:  # type: ignore[no-untyped-def]
    ids = {name: run.pk for name, run in runs.items() if isinstance(run, Run)}
    assert sorted(listed(reviewer_client)) == sorted(ids.values())
    assert listed(reviewer_client, status="blocked") == [ids["blocked"]]
    assert sorted(listed(reviewer_client, status=["blocked", "created"])) == sorted(ids.values())
    assert sorted(listed(reviewer_client, agent="coder")) == sorted([ids["plain"], ids["blocked"]])
    assert listed(reviewer_client, session="S-2") == [ids["tasked"]]
    assert listed(reviewer_client, session=str(runs["session"].pk), q="plain") == [ids["plain"]]
    assert listed(reviewer_client, task="T-1") == [ids["tasked"]] == listed(reviewer_client, task=runs["task"].pk)
    assert listed(reviewer_client, blocked_step="approval_preconditions") == [ids["blocked"]]
    assert listed(reviewer_client, failure="tool_unreachable") == [ids["failing"]]
    assert listed(reviewer_client, category="transient") == [ids["failing"]]
    assert listed(reviewer_client, category="permission") == []
    assert listed(reviewer_client, q="fingerprint CHANGED") == [ids["blocked"]]  # the error's text
    assert listed(reviewer_client, q="r-tASKed") == [ids["tasked"]]  # the ref
    assert listed(reviewer_client, project="acme", q="r-plain") == [ids["plain"]]
    assert listed(reviewer_client, project="globex") == []  # not the user's: nothing, not an error


def test_time_ranges_filter_created_and_updated(project, reviewer_client) -> None:  # type: ignore[no-untyped-def]
    old, new = factories.make_run(project, ref="R-old"), factories.make_run(project, ref="R-new")
    week_ago = timezone.now() - dt.timedelta(days=7)
    Run.objects.filter(pk=old.pk).update(created_at=week_ago, updated_at=week_ago)
    Run.objects.filter(pk=new.pk).update(updated_at=timezone.now())
    cut = (timezone.localtime() - dt.timedelta(days=1)).strftime("%Y-%m-%dT%H:%M")  # a datetime-local input
    assert listed(reviewer_client, created_after=cut) == [new.pk]
    assert listed(reviewer_client, created_before=cut) == [old.pk]
    assert listed(reviewer_client, updated_before=cut) == [old.pk]
    assert listed(reviewer_client, updated_after=cut, created_after=cut) == [new.pk]


def test_a_bad_filter_value_is_named_and_the_others_still_apply(runs, reviewer_client) -> None:  # type: ignore[no-untyped-def]
    body = reviewer_client.get(f"{URL}?created_after=yesterday&status=blocked").content.decode()
    assert 'id="filter-errors"' in body and "created" in body
    assert shown(body) == [runs["blocked"].pk]
    assert shown(reviewer_client.get(f"{URL}?status=nonsense").content.decode()) != []  # dropped, not an error


def test_counts_per_status_follow_the_other_filters_and_link_to_the_status(runs, reviewer_client) -> None:  # type: ignore[no-untyped-def]
    body = reviewer_client.get(f"{URL}?agent=coder&status=created").content.decode()
    counts = dict(re.findall(
        r'data-status="(\w+)"><a href="\?[^"]*status=\w+"[^>]*><span[^>]*>\w+</span> <strong>(\d+)', body))
    assert counts["created"] == "1" and counts["blocked"] == "1" and counts["running"] == "0"
    assert 'href="?agent=coder&amp;status=blocked"' in body  # the other filters stay, the status is replaced
    assert runs_sel.run_status_counts(project_ids=[runs["plain"].project_id], cap=1)["created"] == 2  # "1+"


def test_the_list_pages_by_cursor_in_each_sort_across_projects(project, other_project, client_for,
                                                               monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(runs_sel, "RUN_PAGE_SIZE", 2)
    made = [factories.make_run(project if i % 2 else other_project, ref=f"R-{i}").pk for i in range(5)]
    client = client_for(factories.make_user("vera", role="reviewer", projects=[project, other_project]))

    def walk(sort: str) -> list[int]:
        seen: list[int] = []
        body = client.get(f"{URL}?sort={sort}").content.decode()
        assert 'id="runs-previous"' not in body
        while True:
            seen += shown(body)
            link = re.search(r'href="\?([^"]*after=[0-9.]+)" id="runs-next"', body)
            if link is None:
                break
            assert f"sort={sort}" in link[1]  # the sort stays in the link
            body = client.get(f"{URL}?{link[1].replace('&amp;', '&')}").content.decode()
        back = re.search(r'href="\?([^"]*before=[0-9.]+)" id="runs-previous"', body)
        assert back is not None
        assert shown(client.get(f"{URL}?{back[1].replace('&amp;', '&')}").content.decode()) == seen[2:4]
        return seen

    assert walk("-created") == made[::-1]
    assert walk("created") == made
    Run.objects.filter(pk=made[0]).update(updated_at=timezone.now() + dt.timedelta(minutes=1))
    assert walk("-updated")[0] == made[0]
    assert shown(client.get(f"{URL}?after=nonsense").content.decode()) == made[::-1][:2]


def test_a_member_of_a_sees_none_of_b_runs(project, other_project, reviewer_client) -> None:  # type: ignore[no-untyped-def]
    mine = factories.make_run(project, ref="R-mine", active_agent="coder")
    theirs = factories.make_run(other_project, ref="R-theirs", active_agent="spy")
    body = reviewer_client.get(URL).content.decode()
    assert shown(body) == [mine.pk] and "R-theirs" not in body and "spy" not in body and "globex" not in body
    assert listed(reviewer_client, q="R-theirs") == [] == listed(reviewer_client, project="globex")
    assert reviewer_client.get(reverse("runs:run_inspector", args=[theirs.pk])).status_code == 404


def test_agent_text_in_a_run_is_shown_as_text(project, reviewer_client) -> None:  # type: ignore[no-untyped-def]
    payload = '<script>alert(1)</script><img src=x onerror="alert(2)">'
    session = factories.make_session(project, ref="S-x")
    run = factories.make_run(project, session, ref="<script>x</script>", active_agent=f"a{payload}")
    _blocked(project, run, "load", payload)
    body = reviewer_client.get(f"{URL}?{urlencode({'q': '<script>'})}").content.decode()
    assert shown(body) == [run.pk]
    assert "<script>alert" not in body and "<img src=x" not in body and "<script>x" not in body
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body
