"""`manage.py telegram set-webhook [--url URL] | delete-webhook` (installed: `hookbridge telegram …`): tell Telegram
where to send the bot's updates (this server's /integrations/telegram/webhook, with the secret it checks), or to
keep them for getUpdates (HOOKBRIDGE_TELEGRAM_POLL)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import CommandError, CommandParser
from django.urls import reverse

from core import commands, presence
from notify import telegram
from notify.sending import Failed


class Command(commands.Command):
    help = "Register this server's Telegram webhook (set-webhook), or remove it to poll instead (delete-webhook)."

    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True, metavar="set-webhook|delete-webhook")
        setting = actions.add_parser("set-webhook", help="send the bot's updates to this server")
        setting.add_argument("--url", help="the webhook's public https address (default: HOOKBRIDGE_PUBLIC_URL's)")
        actions.add_parser("delete-webhook", help="keep the updates for getUpdates (HOOKBRIDGE_TELEGRAM_POLL)")

    def handle(self, *args: Any, **options: Any) -> None:
        if not telegram.configured():
            raise CommandError("HOOKBRIDGE_TELEGRAM_BOT_TOKEN is not set: create the bot with @BotFather first")
        try:
            if options["action"] == "delete-webhook":
                telegram.call("deleteWebhook")
                self.stdout.write("Removed the webhook: set HOOKBRIDGE_TELEGRAM_POLL=true for the server to poll.")
                return
            secret = settings.HOOKBRIDGE_TELEGRAM_WEBHOOK_SECRET
            if not secret:
                raise CommandError("HOOKBRIDGE_TELEGRAM_WEBHOOK_SECRET is not set: the webhook would take any post")
            url = options["url"] or presence.public_url() + reverse("notify:telegram-webhook")
            if not url.startswith("https://"):
                self.stderr.write(f"warning: Telegram sends updates only to https addresses, and {url} is not one")
            telegram.set_webhook(url, secret)
        except Failed as failed:
            raise CommandError(failed.reason) from None
        self.stdout.write(f"Telegram now sends the bot's presses and messages to {url}.")
