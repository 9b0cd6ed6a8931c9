"""Remove old history: resolved questions (with their answers), lifecycle events, finished sessions and hook runs."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

from django.core.management.base import CommandError, CommandParser
from django.db import models, transaction
from django.utils import timezone

from audit import chain
from core import commands
from hooks.models import HookRun
from lifecycle.models import AgentSession, LifecycleEvent
from questions.models import Question, Status

UNITS = {"d": "days", "h": "hours", "w": "weeks"}


def parse_age(text: str) -> timedelta:
    match = re.fullmatch(r"(\d+)([dhw])", text.strip())
    if not match or int(match.group(1)) == 0:
        raise CommandError(f"--older-than takes a positive age such as 90d, 12h or 4w; got {text!r}")
    return timedelta(**{UNITS[match.group(2)]: int(match.group(1))})


class Command(commands.Command):
    help = "Remove history older than an age (pending questions and open sessions are always kept)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--older-than", required=True, help="e.g. 90d, 12h or 4w")
        parser.add_argument("--dry-run", action="store_true", help="Say what would be removed, remove nothing.")
        parser.add_argument(
            "--audit",
            action="store_true",
            help="Also the audit record's entries older than that, behind its last signed checkpoint then.",
        )

    def handle(self, *args: Any, older_than: str, dry_run: bool, audit: bool = False, **options: Any) -> None:
        cutoff = timezone.now() - parse_age(older_than)
        questions = Question.objects.exclude(status=Status.PENDING).filter(created_at__lt=cutoff)
        events = LifecycleEvent.objects.filter(created_at__lt=cutoff)
        finished = models.Q(closed_at__isnull=False) | models.Q(completed_at__isnull=False)
        sessions = AgentSession.objects.filter(finished, last_activity_at__lt=cutoff)
        runs = HookRun.objects.filter(finished_at__isnull=False, finished_at__lt=cutoff)
        counts = {
            "questions (with their answers)": questions.count(),
            "lifecycle events": events.count(),
            "sessions (with their events)": sessions.count(),
            "hook runs (with their output)": runs.count(),
        }
        verb = "Would remove" if dry_run else "Removed"
        if not dry_run:
            # One transaction: a purge that fails half-way removes nothing.
            with transaction.atomic():
                questions.delete()
                events.delete()
                sessions.delete()
                runs.delete()
        for what, count in counts.items():
            self.stdout.write(f"{verb} {count} {what} older than {cutoff:%Y-%m-%d %H:%M} UTC.")
        if audit and not dry_run:
            dropped, through = chain.purge_before(cutoff)
            if through:
                self.stdout.write(
                    f"Removed {dropped} audit entries through seq {through}, behind its signed checkpoint."
                )
            else:
                self.stdout.write("Removed no audit entries: no signed checkpoint is that old yet.")
