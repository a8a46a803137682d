"""runtime_role NAME [--create]: make NAME this database's runtime role (harness.roles), then check it.

Run it as the tables' owner after every `migrate`. `--create` creates the login role first if it does not
exist (give it a password yourself: `ALTER ROLE NAME PASSWORD '...'`, or use trust/peer auth on loopback).
The application then connects as it: DATABASE_URL=postgres://NAME@host/db.
"""

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from harness.roles import runtime_role_create, runtime_role_grant, runtime_role_problems


class Command(BaseCommand):
    help = "Grant a role the runtime role's privileges on this database (it owns nothing), then check it."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name", help="The role, e.g. harness_app.")
        parser.add_argument("--create", action="store_true", help="Create the login role if it does not exist.")

    def handle(self, *args: Any, **options: Any) -> None:
        name: str = options["name"]
        try:
            if options["create"]:
                runtime_role_create(name)
            # Checked before anything is granted or revoked: revoking from the owner would lock it out.
            problems = runtime_role_problems(name)
            if problems:
                raise CommandError("; ".join(problems))
            tables = runtime_role_grant(name)
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"{name}: the runtime role on {len(tables)} tables (owns none, no superuser)")
