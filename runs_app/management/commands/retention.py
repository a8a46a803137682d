"""retention [--project SLUG ...] [--dry-run]: one retention pass (or its dry run) for projects with a policy.

The dry run prints, per project and kind, how many rows a pass would remove and how many each keep rule keeps;
a pass prints what it removed (each round is audited as `retention.pruned`).
"""

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from harness.models import Project
from runs_app.retention import BATCH, ROUNDS, retention_pass, retention_report


class Command(BaseCommand):
    help = "Apply each project's retention policy (or, with --dry-run, report what it would remove and keep)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--project", action="append", default=[],
                            help="A project slug (repeatable); every project with a policy by default.")
        parser.add_argument("--dry-run", action="store_true", help="Report only; remove nothing.")
        parser.add_argument("--batch", type=int, default=BATCH, help="Rows per DELETE statement.")
        parser.add_argument("--rounds", type=int, default=ROUNDS, help="Rounds (one transaction each) per pass.")

    def handle(self, *args: Any, **options: Any) -> None:
        slugs: list[str] = options["project"]
        projects = Project.objects.filter(retention_policy__isnull=False).order_by("slug")
        if slugs:
            projects = Project.objects.filter(slug__in=slugs).order_by("slug")
            missing = sorted(set(slugs) - {project.slug for project in projects})
            if missing:
                raise CommandError(f"no project {', '.join(missing)}")
        for project in projects:
            if options["dry_run"]:
                for kind, part in retention_report(project=project).items():
                    kept = ", ".join(f"{rule} {count}" for rule, count in part.kept.items()) or "none"
                    self.stdout.write(f"{project.slug} {kind}: would remove {part.would_go}; kept by rule: {kept}")
            else:
                removed = retention_pass(project=project, batch=options["batch"], rounds=options["rounds"])
                counts = ", ".join(f"{kind} {count}" for kind, count in removed.items())
                self.stdout.write(f"{project.slug}: removed {counts}")
