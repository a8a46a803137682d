"""The console's runs list at a million runs: its pages, deep pages and counts, timed (issue 17, part 1).

    createdb -h 127.0.0.1 -U postgres harness_runs_1m
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/harness_runs_1m SECRET_KEY=x ALLOWED_HOSTS=127.0.0.1 \\
        .venv/bin/python -m bench.runs_list_million [--runs 1000000]

Builds once (then reuses) a project `runs-million` with that many runs in one session (bench.bulk: one
run made by the services, copied in SQL): statuses mostly succeeded, a few blocked at two steps, twenty
agents, one run a second going back in time. Then it times each page through Django's test Client as
the project's reviewer (the whole request: filters, counts, the page's rows, the template) and prints the
median, the 95th percentile and the statements of each, beside the same pages at 1,000 runs (a second
project) for the ratio. Not part of bin/bench: a million rows take a minute to build.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402

from bench import bulk  # noqa: E402
from bench.scenarios_worker import reviewer  # noqa: E402
from harness.models import Project  # noqa: E402
from runs_app.models import Run  # noqa: E402
from runs_app.selectors.paging import seek_cursor  # noqa: E402
from runs_app.services import run_create  # noqa: E402
from sessions_app.services import session_create  # noqa: E402

STATUS = ("CASE WHEN g %% 1000 = 0 THEN 'blocked' WHEN g %% 100 = 0 THEN 'failed' WHEN g %% 50 = 0 THEN "
          "'waiting_approval' WHEN g %% 10 = 0 THEN 'running' ELSE 'succeeded' END")


def project_with(runs: int) -> Project:
    slug = f"runs-million-{runs}"
    project = Project.objects.filter(slug=slug).first()
    if project is not None and Run.objects.filter(project=project).count() == runs:
        return project
    if project is not None:
        Project.objects.filter(pk=project.pk).update(slug=f"{slug}-stale-{int(time.time())}")
    started = time.perf_counter()
    project = Project.objects.create(slug=slug, name=slug)
    session = session_create(project=project, role="writer", memory_policy="bounded")
    template = run_create(project=project, session_id=session.pk)
    bulk.clone("runs_app_run", template.pk, count=runs - 1, overrides={
        "status": STATUS, "ref": "'R-' || g",
        "active_agent": "'agent-' || (g %% 20)",
        "blocked_step": f"CASE WHEN ({STATUS}) = 'blocked' THEN (ARRAY['approval_preconditions', 'budget'])"
                        "[1 + (g / 1000) %% 2] ELSE '' END",
        "error": f"CASE WHEN ({STATUS}) IN ('blocked', 'failed') THEN jsonb_build_object('reason', "
                 "'the tool said no to ' || g) END",
        "created_at": "t.created_at - g * interval '1 second'",
        "updated_at": "t.created_at - g * interval '1 second' + interval '5 seconds'"})
    bulk.analyze("runs_app_run")
    print(f"built {runs:,} runs in {time.perf_counter() - started:.0f} s", flush=True)
    return project


def pages(project: Project, runs: int) -> dict[str, str]:
    middle = Run.objects.filter(project=project).order_by("-created_at", "-id").values_list(
        "created_at", "id")[runs // 2]
    deep = seek_cursor(*middle)
    return {
        "first page": "/runs/",
        "a deep page (halfway, by cursor)": f"/runs/?after={deep}",
        "oldest first": "/runs/?sort=created",
        "failed, a deep page": f"/runs/?status=failed&after={deep}",
        "blocked at a step": "/runs/?blocked_step=budget",
        "one agent": "/runs/?agent=agent-7",
        "a created range": "/runs/?created_after=2020-01-01T00:00&created_before=2099-01-01T00:00",
        "text in the ref or error (trigram indexes)": "/runs/?q=said+no+to+99999",
    }


def timed(client: Client, url: str, rounds: int) -> tuple[float, float, int]:
    client.get(url)  # warm
    statements: list[str] = []

    def count(execute, sql, params, many, context):  # type: ignore[no-untyped-def]
        statements.append(sql)
        return execute(sql, params, many, context)

    # A wrapper, not CaptureQueriesContext: the request_started signal resets the log that one reads.
    with connection.execute_wrapper(count):
        assert client.get(url).status_code == 200, url
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        client.get(url)
        times.append((time.perf_counter() - started) * 1000)
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.95) - 1], len(statements)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    results = {}
    for size in (1_000, args.runs):
        project = project_with(size)
        client = Client(HTTP_HOST="127.0.0.1")
        client.force_login(reviewer(project))
        results[size] = {name: timed(client, url, args.rounds) for name, url in pages(project, size).items()}
    print(f"| runs list page | p50 ms @ 1,000 | p50 ms @ {args.runs:,} | p95 ms @ {args.runs:,} | ratio | "
          "statements |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for name, (p50, p95, queries) in results[args.runs].items():
        small = results[1_000][name]
        print(f"| {name} | {small[0]:.1f} | {p50:.1f} | {p95:.1f} | {p50 / small[0]:.2f}x | {small[2]} / {queries} |")


if __name__ == "__main__":
    main()
