"""create_personal_token USERNAME [--name NAME] [--expires-in-days N]: a personal API token for a console user, made
by an admin at the terminal (the user makes their own on the console's profile page); prints the token alone on its
last line, the only time it is shown."""

from typing import Any

from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandError, CommandParser

from harness.actors import Actor
from harness.http.errors import DomainError
from harness.tokens import PERSONAL_TOKEN_DEFAULT_DAYS, PERSONAL_TOKEN_MAX_DAYS, personal_token_create


class Command(BaseCommand):
    help = "Create a personal API token for a console user: it acts as that user. The secret is shown once."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username", help="The console user the token acts as.")
        parser.add_argument("--name", default="cli", help="A name for the token, shown on the user's profile page.")
        parser.add_argument("--expires-in-days", type=float, default=PERSONAL_TOKEN_DEFAULT_DAYS,
                            help=f"Refuse the token after this many days (default {PERSONAL_TOKEN_DEFAULT_DAYS}, "
                                 f"at most {PERSONAL_TOKEN_MAX_DAYS}).")

    def handle(self, *args: Any, **options: Any) -> None:
        user = User.objects.filter(username=options["username"]).first()
        if user is None:
            raise CommandError(f"No console user {options['username']!r}.")
        try:
            # Audited under the owner's name (the terminal has no console user of its own), marked as this door.
            token, secret = personal_token_create(user=user, actor=Actor.for_user(user), name=options["name"],
                                                  expires_in_days=options["expires_in_days"], door="manage.py")
        except DomainError as exc:
            raise CommandError(f"{exc.code}: {exc.detail}") from None
        assert token.expires_at is not None  # noqa: S101 - personal tokens always expire
        self.stderr.write(f"Personal token {token.name!r} for {user.get_username()}, expires "
                          f"{token.expires_at:%Y-%m-%d %H:%M} UTC; it is shown only this once:")
        self.stdout.write(secret)
