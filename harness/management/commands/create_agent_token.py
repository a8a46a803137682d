"""create_agent_token --project SLUG --name NAME [--role ROLE] [--expires-in-days N]: prints the new token alone on
its last line."""

import datetime as dt
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction
from django.utils.text import slugify

from harness.http.permissions import TokenRole
from harness.models import Project
from harness.tokens import api_token_create


class Command(BaseCommand):
    help = "Create an agent token for a project (creating the project if needed). The secret is shown once."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--project", required=True, help="Project slug; created if it does not exist.")
        parser.add_argument("--name", required=True, help="A name for the agent, shown in the admin and logs.")
        parser.add_argument("--role", default=TokenRole.AGENT, choices=TokenRole.ALL,
                            help="agent (read and write, the default) or reader (read only).")
        parser.add_argument("--expires-in-days", type=float, default=None,
                            help="Refuse the token after this many days (default: never; rotate or revoke it).")
        parser.add_argument("--agent-identity", default="",
                            help="The key of the token's `agent` memory scope (default: its name).")

    def handle(self, *args: Any, **options: Any) -> None:
        slug = options["project"]
        if slugify(slug) != slug or not slug or len(slug) > 64:
            raise CommandError(f"{slug!r} is not a project slug (lowercase letters, digits, hyphens).")
        name = options["name"].strip()
        if not name or len(name) > 120:
            raise CommandError("--name is 1 to 120 characters.")
        days = options["expires_in_days"]
        if days is not None and days <= 0:
            raise CommandError("--expires-in-days is above 0.")
        with transaction.atomic():
            project, created = Project.objects.get_or_create(slug=slug, defaults={"name": slug})
            _, secret = api_token_create(project=project, name=name, role=options["role"],
                                         expires_in=dt.timedelta(days=days) if days else None,
                                         agent_identity=options["agent_identity"].strip()[:200])
        if created:
            self.stderr.write(f"Created project {slug}.")
        self.stderr.write(f"Agent token {name!r} ({options['role']}) for {slug}; it is shown only this once:")
        self.stdout.write(secret)
