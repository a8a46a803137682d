"""export_run ID --project SLUG --by USERNAME [--session | --task] [-o FILE] [--gzip]: export run ID (or session
or task ID) as one bundle (bundles_app.services.bundle_export) as that operator or admin, audited; the bundle goes
to FILE (gzipped with --gzip) or stdout, and its summary to stderr."""

import json
import sys
from pathlib import Path
from typing import Any

from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandError, CommandParser

from bundles_app.bundle import dumps, summary
from bundles_app.services import bundle_export
from harness.actors import Actor
from harness.http.errors import DomainError
from harness.models import Project


def person(username: str) -> Actor:
    user = User.objects.filter(username=username, is_active=True).first()
    if user is None:
        raise CommandError(f"no active console user {username}")
    return Actor.for_user(user)


class Command(BaseCommand):
    help = "Export a run (or a session or a task) as one hash-checked bundle."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("id", type=int, help="The run's id (the session's with --session, the task's with --task).")
        parser.add_argument("--project", required=True, help="The project's slug.")
        parser.add_argument("--by", required=True,
                            help="The operator or admin exporting (a console username): audited.")
        kind = parser.add_mutually_exclusive_group()
        kind.add_argument("--session", action="store_true", help="ID is a session: export it with all its runs.")
        kind.add_argument("--task", action="store_true", help="ID is a task: export it with all its runs.")
        parser.add_argument("-o", "--output", help="Write the bundle here (default: stdout).")
        parser.add_argument("--gzip", action="store_true", help="Gzip the bundle.")

    def handle(self, *args: Any, **options: Any) -> None:
        project = Project.objects.filter(slug=options["project"]).first()
        if project is None:
            raise CommandError(f"no project {options['project']}")
        kind = "session" if options["session"] else "task" if options["task"] else "run"
        try:
            bundle = bundle_export(project=project, actor=person(options["by"]), kind=kind, root_id=options["id"])
        except DomainError as exc:
            raise CommandError(f"{exc.code}: {exc.detail}") from None
        data = dumps(bundle, compress=options["gzip"])
        if options["output"]:
            Path(options["output"]).write_bytes(data)
        else:
            sys.stdout.buffer.write(data)
            sys.stdout.buffer.flush()
        self.stderr.write(json.dumps(summary(bundle)))
