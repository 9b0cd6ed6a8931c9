"""`manage.py link telegram|discord|teams USERNAME PLATFORM_USER_ID` (installed: `hookbridge link …`): an admin links a
person's chat account, so that person's button presses there answer as them; `--remove` unlinks it."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import CommandError, CommandParser

from core import commands
from notify.models import ChatAccount, Platform


class Command(commands.Command):
    help = "Link a person's Telegram, Discord or Teams account to them (or --remove it)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("platform", choices=Platform.values, help="the chat platform")
        parser.add_argument("username", help="the Hook Bridge person's username")
        parser.add_argument("platform_user_id", nargs="?", default="", help="the platform's id of their account")
        parser.add_argument("--remove", action="store_true", help="unlink the person's account on the platform")

    def handle(self, *args: Any, **options: Any) -> None:
        platform, account_id = options["platform"], options["platform_user_id"].strip()
        person = get_user_model().objects.filter(username=options["username"]).first()
        if person is None:
            raise CommandError(f"username: nobody here is called {options['username']!r}")
        label = Platform(platform).label
        if options["remove"]:
            gone, _ = ChatAccount.objects.filter(user=person, platform=platform).delete()
            self.stdout.write(f"Unlinked {person}'s {label} account." if gone else f"{person} had no {label} account.")
            return
        if not account_id or len(account_id) > 200 or any(char.isspace() for char in account_id):
            raise CommandError(f"platform_user_id: give the {label} account's id (no spaces, at most 200 characters)")
        if platform in (Platform.TELEGRAM, Platform.DISCORD) and not account_id.isdigit():
            raise CommandError(f"platform_user_id: a {label} user's id is a number, not {account_id!r}")
        try:
            ChatAccount.link(person, platform, account_id, by="manage.py link")
        except ValueError as exc:
            raise CommandError(f"platform_user_id: {exc}") from None
        self.stdout.write(f"Linked {label} account {account_id} to {person}: its presses now answer as them.")
