"""create_console_user USERNAME --role reviewer|operator|admin --password P [--project SLUG ...]"""

from argparse import ArgumentParser
from typing import Any

from django.contrib.auth.models import Group, User
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from harness.models import Membership, Project
from harness.tenancy import Role


class Command(BaseCommand):
    help = "Create (or update) a console user with one role, and give it access to projects."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--role", required=True, choices=Role.ALL)
        parser.add_argument("--password", required=True)
        parser.add_argument(
            "--project", action="append", default=[], dest="projects", metavar="SLUG",
            help="A project the user may see; repeat for several.",
        )

    def handle(self, *args: Any, username: str, role: str, password: str, projects: list[str], **options: Any) -> None:
        found = {p.slug: p for p in Project.objects.filter(slug__in=projects)}
        missing = sorted(set(projects) - set(found))
        if missing:
            raise CommandError(f"No such project: {', '.join(missing)}.")
        user = User(username=username)
        try:
            validate_password(password, user)
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from None
        with transaction.atomic():
            user, created = User.objects.get_or_create(username=username)
            user.set_password(password)
            user.is_active = True
            # Admins may open the Django admin too; every role still sees only its projects.
            user.is_staff = role == Role.ADMIN
            user.save()
            user.groups.set([Group.objects.get_or_create(name=role)[0]])
            for project in found.values():
                Membership.objects.get_or_create(user=user, project=project)
        verb = "Created" if created else "Updated"
        where = ", ".join(sorted(found)) or "no project yet"
        self.stdout.write(self.style.SUCCESS(f"{verb} {role} {username!r} (sees {where})."))
