"""Scenario 8's retention rows: does a pass's time grow with the rows it removes, or with the rows it keeps?

Each case is a project of SESSIONS sessions, each holding `keep + remove` items (seq 1..keep+remove), with the
policy `items_keep_last = keep` and nothing else, so a pass removes exactly `remove` items of each session and
keeps `keep`: the kept rows are those the policy itself keeps (newer than the newest `keep`). The pass is
`runs_app.retention.retention_pass` with its defaults (5,000 rows a statement, 20 rounds), repeated until one
removes nothing, every statement counted. A pass consumes its fixture, so each case is built again (in SQL,
bench.bulk) before each of its turns; the cases take turns `rounds` times and the median is reported.

Two series beside a base (10,000 removed, 10,000 kept):
- the same 10,000 removed with 10x and 100x more kept rows: target, the time within RATIO_TARGET of the base;
- the same 10,000 kept with 10x more removed rows: target, the time per removed row within RATIO_TARGET of the
  base's (linear in what it removes).
"""

from __future__ import annotations

import os
import statistics
import time
import uuid
from dataclasses import dataclass

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django.setup()  # run alone too (main below); a no-op under bench/run.py

from django.db import connection  # noqa: E402

from bench import bulk  # noqa: E402
from bench.core import Measure, Settings  # noqa: E402
from harness.models import Project  # noqa: E402
from runs_app.models import RetentionPolicy  # noqa: E402
from runs_app.retention import retention_pass  # noqa: E402
from sessions_app.models import SessionItem  # noqa: E402
from sessions_app.services import NewItem, session_create, session_items_append  # noqa: E402

SESSIONS = 10
RATIO_TARGET = 1.5
TEMPLATE_ITEM: NewItem = {"role": "user", "content": {"text": "a turn of the conversation"}}


@dataclass(frozen=True)
class Case:
    name: str
    keep: int  # items kept per session
    remove: int  # items removed per session
    series: str  # "kept" (time vs the base) or "removed" (time per removed row vs the base)

    @property
    def kept_rows(self) -> int:
        return self.keep * SESSIONS

    @property
    def removed_rows(self) -> int:
        return self.remove * SESSIONS


BASE = Case("base", 1_000, 1_000, "base")
CASES = (
    BASE,
    Case("10x kept", 10_000, 1_000, "kept"),
    Case("100x kept", 100_000, 1_000, "kept"),
    Case("10x removed", 1_000, 10_000, "removed"),
)


def build(case: Case) -> Project:
    """SESSIONS sessions of keep + remove items each, the newest last; the policy keeps the newest `keep`."""
    slug = f"bench-retention-growth-{uuid.uuid4().hex[:8]}"
    project = Project.objects.create(slug=slug, name=slug)
    session = session_create(project=project, role="writer", memory_policy="bounded")
    item = session_items_append(project=project, session_id=session.pk, items=[TEMPLATE_ITEM])[0]
    per = case.keep + case.remove
    sessions = [session.pk, *bulk.clone("sessions_app_session", session.pk, count=SESSIONS - 1)]
    bulk.execute("UPDATE sessions_app_session SET last_seq = %s WHERE project_id = %s", [per, project.pk])
    # g = 2..SESSIONS*per: the template is the first session's seq 1.
    bulk.clone("sessions_app_sessionitem", item.pk, source="generate_series(2, %(n)s) AS g",
               params={"n": SESSIONS * per, "sessions": sessions, "per": per},
               overrides={"session_id": "(%(sessions)s::bigint[])[1 + (g - 1) / %(per)s]",
                          "seq": "1 + (g - 1) %% %(per)s",
                          "created_at": "t.created_at + ((g - 1) %% %(per)s) * interval '1 millisecond'"})
    bulk.analyze("sessions_app_session", "sessions_app_sessionitem")
    RetentionPolicy.objects.create(project=project, items_keep_last=case.keep)
    return project


class _Statements:
    def __init__(self) -> None:
        self.count = 0

    def __call__(self, execute, sql, params, many, context):
        self.count += 1
        return execute(sql, params, many, context)


def run_passes(project: Project) -> tuple[float, int, int, int]:
    """Passes until one removes nothing: (seconds, items removed, passes, statements)."""
    counter = _Statements()
    removed, passes = 0, 0
    started = time.perf_counter()
    with connection.execute_wrapper(counter):
        while True:
            done = retention_pass(project=project)
            passes += 1
            removed += done["items"]
            if not any(done.values()):
                break
    return time.perf_counter() - started, removed, passes, counter.count


def _drop(project: Project) -> None:
    """The rows a case kept, gone (a 100x case keeps a million): they would only weigh on later cases."""
    bulk.execute("DELETE FROM sessions_app_sessionitem WHERE session_id IN "
                 "(SELECT id FROM sessions_app_session WHERE project_id = %s)", [project.pk])


def scenario_retention(settings: Settings) -> list[Measure]:
    seconds: dict[str, list[float]] = {c.name: [] for c in CASES}
    shape: dict[str, tuple[int, int, int]] = {}
    for _ in range(settings.rounds):
        for case in CASES:
            project = build(case)
            took, removed, passes, statements = run_passes(project)
            left = SessionItem.objects.filter(session__project=project).count()
            if removed != case.removed_rows or left != case.kept_rows:
                raise RuntimeError(f"{case.name}: removed {removed:,} and kept {left:,}, not "
                                   f"{case.removed_rows:,} and {case.kept_rows:,}")
            seconds[case.name].append(took)
            shape[case.name] = (removed, passes, statements)
            _drop(project)
    base = statistics.median(seconds[BASE.name])
    out: list[Measure] = []
    lines = ["### 8 retention: a pass's time against the rows it removes and the rows it keeps", "",
             "| case | kept rows | removed rows | passes / statements | pass s (median; all) | time vs base | "
             "target | met |", "| --- | ---: | ---: | ---: | ---: | ---: | --- | --- |"]
    all_met = True
    for case in CASES:
        took = statistics.median(seconds[case.name])
        ratio = took / base if base else float("inf")
        removed, passes, statements = shape[case.name]
        if case.series == "kept":
            target, met = f"<= {RATIO_TARGET}x (same rows removed)", ratio <= RATIO_TARGET
        elif case.series == "removed":
            growth = case.removed_rows / BASE.removed_rows
            target = f"<= {RATIO_TARGET * growth:g}x ({growth:g}x the rows removed)"
            met = ratio <= RATIO_TARGET * growth
        else:
            target, met = "-", True
        all_met &= met
        lines.append(f"| {case.name} | {case.kept_rows:,} | {case.removed_rows:,} | {passes} / {statements} | "
                     f"{took:.2f} ({', '.join(f'{s:.2f}' for s in seconds[case.name])}) | {ratio:.2f}x | {target} | "
                     f"{'yes' if met or case.series == 'base' else '**no**'} |")
        out.append(Measure("8 retention", f"{case.name}: keep {case.kept_rows:,}, remove {case.removed_rows:,}", 1,
                           removed, took, took * 1000, max(seconds[case.name]) * 1000, 0.0,
                           extra={"statements": statements, "passes": passes}))
    lines += ["", f"{SESSIONS} sessions a case, policy `items_keep_last` = kept rows / {SESSIONS}; each case built "
              f"anew before each of its {settings.rounds} turns (the cases take turns).", ""]
    out[-1].extra["section"] = "\n".join(lines)
    out[-1].extra["targets_met"] = all_met
    return out


def main() -> None:
    """`python -m bench.retention_growth [--rounds N] [--every-kind]` against DATABASE_URL (migrated): the rows alone.

    --every-kind computes every kind's rules in each round, as the pass did before it skipped the kinds its policy
    leaves unlimited (for a before/after beside the v1 function; bench/README.md, issue 35's growth section)."""
    import argparse

    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--every-kind", action="store_true")
    args = parser.parse_args()
    if args.every_kind:
        import runs_app.retention as retention

        setattr(retention, "_limited_kinds", lambda policy: list(retention.KINDS) if policy is not None else [])  # noqa: B010
    print(scenario_retention(Settings(rounds=args.rounds))[-1].extra["section"])


if __name__ == "__main__":
    main()
