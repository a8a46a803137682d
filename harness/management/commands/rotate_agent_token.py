"""rotate_agent_token --prefix PREFIX [--overlap-minutes N]: prints the new token alone on its last line.

The old token keeps working for the overlap (default 60 minutes), so the agent can be given the new one and
restarted without a failed call; then it is refused like a revoked one.
"""

import datetime as dt
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from harness.http.errors import DomainError
from harness.models import ApiToken
from harness.tokens import api_token_rotate


class Command(BaseCommand):
    help = "Rotate an API token: a new secret now, the old one valid for --overlap-minutes more."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--prefix", required=True, help="The token's prefix (the admin's token list shows it).")
        parser.add_argument("--overlap-minutes", type=float, default=60.0,
                            help="How long the old token keeps working (default 60; 0 ends it now).")
        parser.add_argument("--expires-in-days", type=float, default=None,
                            help="Refuse the new token after this many days (default: never).")

    def handle(self, *args: Any, **options: Any) -> None:
        overlap = options["overlap_minutes"]
        if overlap < 0:
            raise CommandError("--overlap-minutes is 0 or more.")
        matches = list(ApiToken.objects.filter(prefix=options["prefix"], revoked_at__isnull=True)[:2])
        if len(matches) != 1:
            raise CommandError(f"{len(matches) or 'No'} unrevoked token(s) have the prefix {options['prefix']!r}.")
        days = options["expires_in_days"]
        try:
            new, secret = api_token_rotate(token_id=matches[0].pk, overlap=dt.timedelta(minutes=overlap),
                                           expires_in=dt.timedelta(days=days) if days else None)
        except DomainError as exc:
            raise CommandError(exc.detail) from None
        self.stderr.write(f"Token {new.name!r} rotated; the old one ({matches[0].prefix}…) works for {overlap:g} more "
                          "minute(s). The new one is shown only this once:")
        self.stdout.write(secret)
