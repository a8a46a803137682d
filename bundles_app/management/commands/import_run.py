"""import_run FILE --project SLUG --by USERNAME: import a bundle (a run's, a session's or a task's; gzipped or
not; `-` reads stdin) read-only into project SLUG (bundles_app.services.bundle_import), created if missing when
USERNAME is an admin; print what was imported as JSON. A refused bundle writes nothing and exits with its code."""

import json
import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from bundles_app.bundle import loads, summary
from bundles_app.management.commands.export_run import person
from bundles_app.services import bundle_import
from harness.http.errors import DomainError


class Command(BaseCommand):
    help = "Import a bundle read-only (every record checked against its digest first; all or nothing)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="The bundle (.json or .json.gz); - for stdin.")
        parser.add_argument("--project", required=True, help="The target project's slug (an admin may name a new one).")
        parser.add_argument("--by", required=True,
                            help="The operator or admin importing (a console username): audited.")

    def handle(self, *args: Any, **options: Any) -> None:
        raw = sys.stdin.buffer.read() if options["file"] == "-" else Path(options["file"]).read_bytes()
        try:
            bundle = loads(raw)
            done = bundle_import(bundle=bundle, actor=person(options["by"]), project_slug=options["project"])
        except DomainError as exc:
            raise CommandError(f"{exc.code}: {exc.detail}") from None
        self.stdout.write(json.dumps({"imported": done.bundle.pk, "project": done.bundle.project.slug,
                                      "root": {"kind": done.bundle.kind, "id": done.root_local_id,
                                               "source_id": done.bundle.root_source_id},
                                      "summary": summary(bundle)}, indent=2))
