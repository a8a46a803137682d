"""Load the seeds' scenario so a newcomer sees real data at once.

Project "novelforge": session S-42 with runs R-100 (succeeded), R-101 (waiting for approval of a
high-risk tool call) and R-102 (created); task T-7 with its day-1 to day-3 checkpoints; one
pending approval; one consumed effect; memory records, one superseding another. Then the project's last
14 days (demo.history): a few hundred runs of four agents, decided approvals, held memory, decided by the
reviewer `mira` (no password: she cannot log in). Everything is written through the services, as an agent
would through the API. Running it twice changes nothing.
"""

from typing import Any

from django.contrib.auth.models import Group, User
from django.core.management.base import BaseCommand, CommandParser
from django.db import transaction

from demo.history import load_demo_history
from demo.memory import load_demo_memory
from demo.policies import load_demo_policies
from demo.tools import PUBLISH_CHAPTER_SCHEMA
from harness.actors import Actor
from harness.canonical import digest
from harness.models import Membership, Project
from harness.tenancy import Role
from runs_app import services as runs
from runs_app.models import Task
from sessions_app.services import session_create, session_items_append, session_transition

PLAN = ["outline", "draft", "publish", "summarize"]
OUTLINE = "1. The keeper  2. The storm  3. The lighthouse"
DRAFT = "Chapter 3. The lamp had not been lit for eleven years..."
DEMO_USERS = {"reviewer": Role.REVIEWER, "operator": Role.OPERATOR, "admin": Role.ADMIN}
HISTORY_REVIEWER = "mira"  # the history's decisions are hers; she has no password (no login)
# The policies' operator and second group (demo.policies), no login either.
POLICY_OPERATOR, PUBLISHER = "olga", "pat"


class Command(BaseCommand):
    help = "Load the demo scenario (project novelforge, session S-42, runs R-100..R-102, task T-7)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--with-users", action="store_true",
            help="Also create console users reviewer/operator/admin (password = username + '-demo'). Local only.",
        )

    def handle(self, *args: Any, with_users: bool = False, **options: Any) -> None:
        project, created = Project.objects.get_or_create(slug="novelforge", defaults={"name": "NovelForge"})
        if with_users:
            self._users(project)
        # The demo tool's declared schema first, so the scenario's approval is validated against it (a no-op
        # when it is registered already).
        runs.tool_schema_register(project=project, tool="publish_chapter", schema=PUBLISH_CHAPTER_SCHEMA,
                                  actor=Actor.for_agent("demo-loader"))
        if project.sessions.filter(ref="S-42").exists():
            self.stdout.write("The demo is already loaded (project novelforge).")
        else:
            with transaction.atomic():
                self._scenario(project)
            self.stdout.write(self.style.SUCCESS("Loaded the demo: project novelforge, S-42, R-100..R-102, T-7."))
        with transaction.atomic():
            made = load_demo_history(project=project, reviewer=self._user(project, HISTORY_REVIEWER, Role.REVIEWER))
        if made:
            self.stdout.write(self.style.SUCCESS(f"Loaded its last 14 days: {made} runs."))
        self._policies(project)

    def _policies(self, project: Project) -> None:
        mira = self._user(project, HISTORY_REVIEWER, Role.REVIEWER)
        people = {u.username: u for u in User.objects.filter(username__in=DEMO_USERS)}
        editors = [mira, *(people[name] for name in ("reviewer", "admin") if name in people)]
        publishers = [self._user(project, PUBLISHER, Role.REVIEWER), *([people["admin"]] if "admin" in people else [])]
        with transaction.atomic():
            loaded = load_demo_policies(project=project, operator=self._user(project, POLICY_OPERATOR, Role.OPERATOR),
                                        editors=editors, publishers=publishers, voter=mira)
        if loaded:
            self.stdout.write(self.style.SUCCESS("Loaded its approval policies: S-43, a quorum waiting for a second "
                                                 "editor."))

    def _users(self, project: Project) -> None:
        for username, role in DEMO_USERS.items():
            self._user(project, username, role, password=f"{username}-demo")

    def _user(self, project: Project, username: str, role: str, password: str | None = None) -> User:
        """`username` with `role` in `project`; a new user gets `password`, or an unusable one (no login)."""
        user, made = User.objects.get_or_create(username=username, defaults={"is_staff": role == Role.ADMIN})
        if made:
            user.set_password(password)  # None: unusable
            user.is_superuser = role == Role.ADMIN
            user.save()
            if password:
                self.stdout.write(f"console user {username} / {password} ({role})")
        user.groups.add(Group.objects.get_or_create(name=role)[0])
        Membership.objects.get_or_create(user=user, project=project)
        return user

    def _scenario(self, project: Project) -> None:
        session = session_create(project=project, role="manager", memory_policy="bounded", ref="S-42",
                                 metadata={"novel": "The Lighthouse Keeper"})
        session = session_transition(project=project, session_id=session.pk, to="running",
                                     expected_version=session.version)
        fingerprints = {"outline": "sha256:" + digest(OUTLINE), "draft": "sha256:" + digest(DRAFT)}
        task = runs.task_create(
            project=project, ref="T-7", objective="Write and publish chapter 3 of The Lighthouse Keeper",
            constraints=["keep the keeper's name secret until chapter 5", "publish only after human approval"],
            plan=PLAN,
        )
        runs.task_transition(project=project, task_id=task.pk, to="active", expected_version=task.version)

        # Day 1 and 2: R-100 outlines and drafts, with one external effect consumed.
        r100 = self._run(project, session.pk, task.pk, "R-100")
        session_items_append(project=project, session_id=session.pk, items=[
            {"role": "user", "content": {"text": "Outline chapter 3, then draft it."}, "run_id": r100.pk},
            {"role": "assistant", "content": {"text": "Outline ready: keeper, storm, lighthouse."}, "run_id": r100.pk},
        ])
        runs.effect_intend(project=project, idempotency_key="T-7/research/lighthouses", tool="fetch_research",
                           arguments={"topic": "lighthouses"}, run_id=r100.pk)
        runs.effect_deliver(project=project, idempotency_key="T-7/research/lighthouses",
                            result={"sources": 3, "summary": "Fresnel lenses, keepers' logs"})
        task = runs.task_save(project=project, task_id=task.pk, expected_version=self._version(task),
                              completed_nodes=["outline"], pending_nodes=PLAN[1:],
                              artifact_refs={"outline": fingerprints["outline"]})
        day1 = runs.checkpoint_create(
            project=project, run_id=r100.pk, label="day 1: outline", cursor={"node": "draft", "index": 1},
            state={"completed": ["outline"]}, artifact_fingerprints={"outline": fingerprints["outline"]},
            authority_ref="novelforge@main",
        )
        task = runs.task_save(project=project, task_id=task.pk, expected_version=self._version(task),
                              completed_nodes=["outline", "draft"], pending_nodes=PLAN[2:],
                              artifact_refs=fingerprints)
        day2 = runs.checkpoint_create(
            project=project, run_id=r100.pk, parent_id=day1.pk, label="day 2: draft",
            cursor={"node": "publish", "index": 2}, state={"completed": ["outline", "draft"]},
            artifact_fingerprints=fingerprints, authority_ref="novelforge@main",
        )
        runs.run_transition(project=project, run_id=r100.pk, to="succeeded", expected_version=None)

        # Day 3: R-101 picks up at "publish", a high-risk action that waits for a human.
        r101 = self._run(project, session.pk, task.pk, "R-101", current_node="publish")
        session_items_append(project=project, session_id=session.pk, items=[
            {"role": "user", "content": {"text": "Publish chapter 3 when it is approved."}, "run_id": r101.pk},
            {"role": "assistant", "content": {"text": "Requesting approval to publish chapter 3."}, "run_id": r101.pk},
        ])
        runs.checkpoint_create(
            project=project, run_id=r101.pk, parent_id=day2.pk, label="day 3: before publish",
            cursor={"node": "publish", "index": 2}, state={"completed": ["outline", "draft"]},
            artifact_fingerprints=fingerprints, authority_ref="novelforge@main",
            pending_gate={"kind": "approval", "tool": "publish_chapter"},
        )
        runs.approval_request_create(
            project=project, run_id=r101.pk, tool="publish_chapter",
            arguments={"chapter": 3, "title": "The Lighthouse"}, idempotency_key="T-7/publish/chapter-3",
            risk="high", reason="Publishing is public and cannot be undone.", actor=Actor.for_agent("writer"),
        )

        # queued for tomorrow, not started.
        runs.run_create(project=project, session_id=session.pk, ref="R-102", task_mode="review",
                        active_agent="semantic_reviewer")
        self._memory(project, session.pk, r100.pk)

    def _run(self, project: Project, session_id: int, task_id: int, ref: str, **kwargs: Any) -> Any:
        run = runs.run_create(project=project, session_id=session_id, task_id=task_id, ref=ref,
                              task_mode="write", active_agent="writer", **kwargs)
        return runs.run_transition(project=project, run_id=run.pk, to="running", expected_version=run.version)

    @staticmethod
    def _version(task: Task) -> int:
        return Task.objects.values_list("version", flat=True).get(pk=task.pk)

    def _memory(self, project: Project, session_id: int, run_id: int) -> None:
        load_demo_memory(project=project, session_id=session_id, run_id=run_id)
