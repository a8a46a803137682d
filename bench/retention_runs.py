"""Retention of finished runs (issue 20; runs_app migrations 0020, 0021): the dry run of the `runs` kind and one
round that removes runs with their whole history, on bench.retention_pass's fixture.

    createdb -h 127.0.0.1 -U postgres harness_bench_retention_runs
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/harness_bench_retention_runs SECRET_KEY=x \\
        ALLOWED_HOSTS=127.0.0.1 .venv/bin/python manage.py migrate
    DATABASE_URL=... SECRET_KEY=x ALLOWED_HOSTS=127.0.0.1 .venv/bin/python -m bench.retention_runs \\
        [--runs 100000] [--batch 500]

The fixture is bench.retention_pass's (`build`, with 10 sessions of 100 items): `--runs` runs, one in ten marked
waiting (live), the rest succeeded, each with three events, two or three checkpoints and a consumed effect. The
policy is `runs_keep_last = 0` and nothing else, so only the `runs` kind works. It prints the dry run (its time,
what would go, what each rule keeps), then one round of at most `--batch` runs (its time, what it removed) and
the sequential scans of runs_app_run that round made (pg_stat_user_tables; the statistics are reset before it).
"""

from __future__ import annotations

import argparse
import time

from django.db import connection

from bench.retention_pass import build  # sets Django up (before the models below)
from runs_app.models import RetentionPolicy
from runs_app.retention import retention_pass, retention_report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=100_000)
    parser.add_argument("--batch", type=int, default=500)
    args = parser.parse_args()

    project = build(sessions=10, items=100, runs=args.runs)
    RetentionPolicy.objects.create(project=project, runs_keep_last=0)

    started = time.perf_counter()
    report = retention_report(project=project)["runs"]
    print(f"dry run (all kinds): {time.perf_counter() - started:.2f} s; runs would go {report.would_go:,}, "
          f"kept {report.kept}", flush=True)

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_reset()")
    started = time.perf_counter()
    removed = retention_pass(project=project, batch=args.batch, rounds=1)
    elapsed = time.perf_counter() - started
    time.sleep(1)  # the statistics collector's report interval (PostgreSQL 15 flushes at most once a second)
    with connection.cursor() as cursor:
        cursor.execute("SELECT seq_scan, seq_tup_read FROM pg_stat_user_tables WHERE relname = 'runs_app_run'")
        scans, rows = cursor.fetchone()
    print(f"one round (batch {args.batch}): {elapsed:.1f} s; removed {removed}; runs_app_run: {scans:,} sequential "
          f"scans reading {rows:,} rows", flush=True)


if __name__ == "__main__":
    main()
