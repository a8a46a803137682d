"""verify_audit [--project SLUG ...] [--since-last]: walk each project's audit chain; exit 1 if any has a break.

Prints one line per project: its entry count and the head's seq and hash (record the heads somewhere the
database's owner cannot write, and a rewrite of the whole chain shows too), then every break found. The
outcome is kept as the project's verification state, which the console's audit log shows (/audit/);
`--since-last` walks only the entries after those the last check found sound.
"""

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from harness.audit import audit_chain_check
from harness.models import Project


class Command(BaseCommand):
    help = "Verify the audit log's hash chain and each entry's mac, per project."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--project", action="append", default=[],
                            help="A project slug (repeatable); every project by default.")
        parser.add_argument("--since-last", action="store_true",
                            help="Walk only the entries after those the last check found sound.")

    def handle(self, *args: Any, **options: Any) -> None:
        slugs: list[str] = options["project"]
        project_ids: list[int] | None = None
        if slugs:
            found = dict(Project.objects.filter(slug__in=slugs).values_list("slug", "pk"))
            missing = sorted(set(slugs) - set(found))
            if missing:
                raise CommandError(f"no project {', '.join(missing)}")
            project_ids = [found[slug] for slug in slugs]
        slug_of = dict(Project.objects.values_list("pk", "slug"))
        broken = 0
        reports = audit_chain_check(project_ids=project_ids, checked_by="manage.py verify_audit",
                                    from_start=not options["since_last"])
        for report in reports:
            name = slug_of.get(report.project_id, str(report.project_id))
            verdict = "ok" if not report.breaks else f"BROKEN ({len(report.breaks)})"
            walked = " walked" if options["since_last"] else ""
            self.stdout.write(f"{name}: {verdict}, {report.entries} entries{walked}, "
                              f"head #{report.head_seq} {report.head_hash}")
            for item in report.breaks:
                where = f"entry #{item.seq}" if item.seq is not None else "chain"
                self.stdout.write(f"  {where}{f' (id {item.entry_id})' if item.entry_id else ''}: {item.reason}")
            broken += bool(report.breaks)
        if broken:
            raise CommandError(f"the audit chain of {broken} project(s) is broken")
