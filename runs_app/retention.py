"""Retention (issue 20, part 1): a project's policy, its dry run and its pruning pass, through every door.

The keep rules are SQL, written once (runs_app migration 0019: `harness_retention_<kind>(project)` lists the
rows the policy lets go, each with the first keep rule that holds); the dry run counts that list and the pass
deletes from it what no rule keeps, through `harness_retention_prune`, the one door past the history triggers
(docs/concepts/retention.md). So what the dry run reports is what a pass removes, as long as nothing changes between.
Finished runs are a kind too (migration 0020): the last of a round, each going with whatever history it still has.
"""

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from harness.actors import Actor, ActorKind
from harness.audit import audit_record
from harness.http.errors import ValidationFailed
from harness.models import Project
from harness.ops import faults
from harness.tenancy import require_project_operator
from runs_app.models import RETENTION_KINDS, RetentionPolicy, Run
from runs_app.selectors.threads import expired_threads

# In the order a pass removes them: nothing later in the list is pointed at by something earlier.
KINDS: tuple[str, ...] = tuple(RETENTION_KINDS)
# And the LangGraph threads' default time to live (runs_app.services.thread_lifecycle: a thread's own TTL wins).
THREAD_TTL = "thread_ttl_days"
FIELDS: tuple[str, ...] = (*(f"{kind}_{limit}" for kind in KINDS for limit in ("max_age_days", "keep_last")),
                           THREAD_TTL)
# Rows per DELETE statement, and rounds per pass: a pass touches at most BATCH * ROUNDS rows of each kind.
BATCH = 5000
ROUNDS = 20
MAX_SETTING = 2**31 - 1
RETENTION_ACTOR = Actor(ActorKind.WORKER, "retention")

# One statement per kind (the function names are a fixed list, never the caller's text).
_REPORT_SQL = {
    kind: f"SELECT coalesce(kept_by, ''), count(*) FROM harness_retention_{kind}(%s) GROUP BY 1"  # noqa: S608
    for kind in KINDS
}


@dataclass(frozen=True)
class KindReport:
    """Of one kind's rows that the policy lets go: how many go, and how many each keep rule keeps."""

    would_go: int = 0
    kept: dict[str, int] = field(default_factory=dict)


def retention_policy_of(project: Project) -> RetentionPolicy | None:
    return RetentionPolicy.objects.filter(project=project).first()


def retention_policy_set(*, project: Project, actor: Actor, settings: dict[str, int | None]) -> RetentionPolicy:
    """Replace the project's policy with `settings` (every field; a missing one is None, keep everything).

    1. Only an operator of the project (a person: the console, the admin, a personal token) sets it: the policy
       decides what history is deleted, which is not the agents' to decide (403 `not_an_operator`).
    2. Validate: known fields only, each None or 0..2**31-1 (`keep_last` 0 keeps none beyond the keep rules).
    3. Upsert the project's row; audit `retention.policy_set` with the old and new settings.
    """
    require_project_operator(actor.user, project.pk, doing="set its retention policy")
    unknown = sorted(set(settings) - set(FIELDS))
    if unknown:
        raise ValidationFailed(f"Unknown retention setting(s): {', '.join(unknown)}.", code="invalid_retention")
    values = {name: settings.get(name) for name in FIELDS}
    for name, value in values.items():
        whole = isinstance(value, int) and not isinstance(value, bool)
        low = 1 if name == THREAD_TTL else 0  # a TTL of 0 days would expire every thread at once
        if value is not None and not (whole and low <= value <= MAX_SETTING):
            raise ValidationFailed(f"{name} is a whole number from {low} or empty.", code="invalid_retention")
    with transaction.atomic():
        policy = RetentionPolicy.objects.select_for_update().filter(project=project).first()
        before = retention_settings(policy)
        if policy is None:
            policy = RetentionPolicy(project=project)
        for name, value in values.items():
            setattr(policy, name, value)
        policy.save()
        audit_record(project=project, actor=actor, action="retention.policy_set", target=policy,
                     data={"before": before, "after": values})
    return policy


def retention_settings(policy: RetentionPolicy | None) -> dict[str, int | None]:
    return {name: getattr(policy, name) if policy is not None else None for name in FIELDS}


def retention_report(*, project: Project, now: datetime | None = None) -> dict[str, KindReport]:
    """The dry run: per kind, how many rows a pass would remove now and, of those the policy lets go but a
    keep rule keeps, how many each rule keeps; and `threads` (where a TTL is set): the LangGraph threads past
    their TTL, counted the same way. Reads only."""
    report: dict[str, KindReport] = dict.fromkeys(KINDS, KindReport())
    with connection.cursor() as cursor:
        for kind in _limited_kinds(retention_policy_of(project)):
            cursor.execute(_REPORT_SQL[kind], [project.pk])
            counts = dict(cursor.fetchall())
            would_go = counts.pop("", 0)
            report[kind] = KindReport(would_go=would_go, kept=dict(sorted(counts.items())))
    if _has_thread_ttl(project):
        # LangGraph threads past their TTL: the list the pass's thread_ttl_pass deletes from.
        threads: dict[str, int] = {}
        for _run, _thread, rule in expired_threads(project_id=project.pk, now=now or timezone.now(),
                                                      limit=BATCH * ROUNDS):
            threads[rule or ""] = threads.get(rule or "", 0) + 1
        would_go = threads.pop("", 0)
        report["threads"] = KindReport(would_go=would_go, kept=dict(sorted(threads.items())))
    return report


def _has_thread_ttl(project: Project) -> bool:
    return (RetentionPolicy.objects.filter(project=project, thread_ttl_days__isnull=False).exists()
            or Run.objects.filter(project=project, thread_ttl_days__isnull=False).exists())


def retention_pass(*, project: Project, actor: Actor = RETENTION_ACTOR, batch: int = BATCH,
                   rounds: int = ROUNDS, now: datetime | None = None) -> dict[str, int]:
    """Remove what the project's policy lets go and no keep rule keeps, in bounded rounds.

    1. Each round is one transaction: per kind, one DELETE of at most `batch` rows (the prune function
       re-reads the keep rules in that statement), then one audit entry `retention.pruned` with the round's
       counts. A pass killed between rounds leaves whole rounds behind, each audited; the next pass carries on.
    2. A kind whose DELETE removed fewer than `batch` rows is done for this pass: it found all it could, and
       asking again would only recompute its keep rules over the whole project (seconds on a million rows)
       to find what expired since, which the next pass takes.
    3. Stop when every kind is done, or after `rounds` rounds (the next pass goes on).
    4. First, the LangGraph threads past their time to live (their own, or the policy's `thread_ttl_days`) lose
       their checkpoints and writes, each thread audited (`thread.expired`), unless a keep rule needs its run
       (runs_app.services.thread_lifecycle.thread_ttl_pass): `threads_expired` in the result, when any.
    Returns the rows removed per kind.
    """
    from runs_app.services.thread_lifecycle import thread_ttl_pass

    if batch < 1 or rounds < 1:
        raise ValidationFailed("batch and rounds are 1 or more.", code="invalid_retention")
    total = dict.fromkeys(KINDS, 0)
    expired = thread_ttl_pass(project=project, actor=actor, now=now, limit=batch)["threads"]
    if expired:
        total["threads_expired"] = expired
    policy = retention_policy_of(project)
    if policy is None:
        return total
    # A kind the policy sets no limit for lets nothing go: its keep rules are not worth computing (each kind's
    # function reads the whole project's rows of that kind and the sets its rules keep, whatever it finds).
    going = _limited_kinds(policy)
    for round_no in range(1, rounds + 1):
        with transaction.atomic(), connection.cursor() as cursor:
            removed = dict.fromkeys(KINDS, 0)
            for kind in going:
                cursor.execute("SELECT harness_retention_prune(%s, %s, %s)", [project.pk, kind, batch])
                removed[kind] = cursor.fetchone()[0]
                faults.point(f"retention.{kind}")  # a test kills the pass here: the round rolls back whole
            if not any(removed.values()):
                break
            # The foreign keys are deferred: check them now, not at COMMIT, so the audit entry's lock on the
            # project's chain head (which every decision's entry waits for) is held for the INSERT alone. (A
            # deleted checkpoint's check on runs goes through their primary key: runs_app migration 0022.)
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
            audit_record(project=project, actor=actor, action="retention.pruned", target=policy,
                         data={"round": round_no, "removed": removed, "batch": batch})
        for kind, count in removed.items():
            total[kind] += count
        going = [kind for kind in going if removed[kind] == batch]
        if not going:
            break
    return total


def _limited_kinds(policy: RetentionPolicy | None) -> list[str]:
    """The kinds the policy sets an age or a count for: the others let nothing go (their rows are never expired)."""
    if policy is None:
        return []
    return [kind for kind in KINDS
            if getattr(policy, f"{kind}_max_age_days") is not None or getattr(policy, f"{kind}_keep_last") is not None]


def retention_pass_all(*, batch: int = BATCH, rounds: int = ROUNDS) -> dict[str, dict[str, int]]:
    """One pass for every project that has a policy or a thread with its own TTL (beat's job)."""
    done: dict[str, dict[str, int]] = {}
    with_ttl = Run.objects.filter(thread_ttl_days__isnull=False).values("project_id")
    for project in Project.objects.filter(Q(retention_policy__isnull=False) | Q(pk__in=with_ttl)).order_by("pk"):
        done[project.slug] = retention_pass(project=project, batch=batch, rounds=rounds)
    return done


def report_as_json(report: dict[str, KindReport]) -> dict[str, Any]:
    return {kind: {"would_go": part.would_go, "kept": part.kept} for kind, part in report.items()}
