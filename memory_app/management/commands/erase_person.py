"""erase_person --project SLUG --subject KEY --by USERNAME --reason TEXT [--dry-run]: erase one person's data in a
project (memory_app.erasure.person_erase) as an admin, and print the report as JSON: per store, erased and kept
counts and why kept. `--dry-run` prints what would be erased and changes nothing."""

import json
from typing import Any

from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandError, CommandParser

from harness.actors import Actor
from harness.http.errors import DomainError
from harness.models import Project
from memory_app.erasure import person_erase, person_erase_preview


class Command(BaseCommand):
    help = "Erase a person's memory, authored session items and stored replies in one project; print the report."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--project", required=True, help="The project's slug.")
        parser.add_argument("--subject", required=True, help="The person: their user-scope memory key and the "
                                                             "`user` their sessions' metadata names.")
        parser.add_argument("--by", required=True, help="The admin asking (a console username): audited.")
        parser.add_argument("--reason", default="", help="Why (required unless --dry-run): audited.")
        parser.add_argument("--dry-run", action="store_true", help="Report what would be erased; change nothing.")

    def handle(self, *args: Any, **options: Any) -> None:
        project = Project.objects.filter(slug=options["project"]).first()
        if project is None:
            raise CommandError(f"no project {options['project']}")
        user = User.objects.filter(username=options["by"], is_active=True).first()
        if user is None:
            raise CommandError(f"no active console user {options['by']}")
        actor = Actor.for_user(user)
        try:
            if options["dry_run"]:
                report = person_erase_preview(project=project, actor=actor, subject=options["subject"])
            else:
                report = person_erase(project=project, actor=actor, subject=options["subject"],
                                      reason=options["reason"])
        except DomainError as exc:
            raise CommandError(f"{exc.code}: {exc.detail}") from None
        self.stdout.write(json.dumps(report.as_dict(), indent=2))
