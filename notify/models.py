"""Deliveries to people: each step of a question's escalation, and every attempt at it.

A step is a row (Delivery) from the moment the question is asked: scheduled steps survive a restart, and
any worker may send one. A worker claims a step with a conditional UPDATE (due -> sending), so with several
workers each step is sent once. Every attempt is kept (DeliveryAttempt), shown in the admin and on the
question's page.
"""

from __future__ import annotations

import secrets
import uuid
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models, transaction
from django.utils import timezone

from audit.audited import Audited
from notify import policy
from projects.models import Project
from questions.models import Question


def _valid_policy(text: str) -> None:
    try:
        policy.parse(text)
    except ValueError as exc:
        raise ValidationError(str(exc)) from None


class NotifyPolicy(Audited):
    """A project's own escalation, instead of HOOKBRIDGE_NOTIFY: kept by the project's admins.

    It belongs to the project by a foreign key, never by a name: a session's project label is free text an
    agent chooses, and a question must never reach the people another project's admins chose (issue 37).
    """

    # Who is told, when: a setting a project changes at run time (settings.changed in the audit record).
    audit_noun = "notify_policy"

    project = models.OneToOneField(
        Project,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="notify_policy",
        help_text="The project whose questions this policy escalates (its admins keep it).",
    )
    steps = models.CharField(
        max_length=200, validators=[_valid_policy], help_text="channel@delay, in order: slack@0s,email@10m"
    )
    slack_channel = models.CharField(max_length=80, blank=True, help_text="Empty: HOOKBRIDGE_SLACK_CHANNEL.")
    telegram_chat = models.CharField(
        max_length=80,
        blank=True,
        help_text="A chat's id (-100… for a group) or @channel. Empty: HOOKBRIDGE_TELEGRAM_CHAT_ID.",
    )
    discord_channel = models.CharField(
        max_length=40, blank=True, help_text="A channel's id (a number). Empty: HOOKBRIDGE_DISCORD_CHANNEL_ID."
    )
    teams_conversation = models.CharField(
        max_length=400, blank=True, help_text="A channel's conversation id (19:…@thread.tacv2). Empty: "
        "HOOKBRIDGE_TEAMS_CONVERSATION_ID.",
    )  # fmt: skip
    email_to = models.CharField(
        max_length=1000, blank=True, help_text="Comma-separated addresses. Empty: HOOKBRIDGE_EMAIL_TO."
    )
    enabled = models.BooleanField(default=True, help_text="A disabled policy escalates nothing.")
    # What a policy was named before issue 37 (when a name chose it), and why the migration disabled it.
    former_name = models.CharField(max_length=200, blank=True, editable=False)
    note = models.TextField(blank=True, editable=False)

    class Meta:
        verbose_name_plural = "notify policies"
        ordering = ["project__name", "id"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(enabled=False) | models.Q(project__isnull=False),
                name="an_enabled_policy_has_a_project",
            )
        ]

    def __str__(self) -> str:
        owner = self.project.name if self.project_id is not None and self.project else f"'{self.former_name}'"
        return f"{owner}: {self.steps}" + ("" if self.enabled else " (disabled)")

    def clean(self) -> None:
        if self.enabled and self.project_id is None:
            raise ValidationError({"project": "An enabled policy belongs to a project: choose one, or disable it."})


class PushSubscription(models.Model):
    """A browser a person turned push on in: where its push service takes their notifications (notify.push).

    What the browser's PushSubscription gave: the endpoint the server posts to (on a push service
    HOOKBRIDGE_PUSH_SERVICES lists) and the keys each payload is encrypted for.
    """

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="push_subscriptions")
    endpoint = models.URLField(max_length=2000, unique=True)
    p256dh = models.CharField(max_length=200, help_text="The browser's public key (P-256, base64url).")
    auth = models.CharField(max_length=100, help_text="The browser's authentication secret (base64url).")
    device = models.CharField(max_length=200, blank=True, help_text="The browser, as it named itself.")
    created_at = models.DateTimeField(default=timezone.now)
    last_sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.user} on {self.service}" + (f" ({self.device})" if self.device else "")

    @property
    def service(self) -> str:
        return urlsplit(self.endpoint).netloc

    @property
    def label(self) -> str:
        """Where a push step goes, as a delivery's target (unique per subscription)."""
        return f"{self.user} on {self.service} (#{self.pk})"

    def info(self) -> dict[str, Any]:
        """The subscription as pywebpush takes it: the browser's own PushSubscription JSON."""
        return {"endpoint": self.endpoint, "keys": {"p256dh": self.p256dh, "auth": self.auth}}


class Platform(models.TextChoices):
    TELEGRAM = "telegram", "Telegram"
    DISCORD = "discord", "Discord"
    TEAMS = "teams", "Microsoft Teams"


class ChatAccount(models.Model):
    """A person's account on a chat platform: a button pressed there answers as this person, and only then.

    Linked by the person (a one-time code from their Notifications page that they give the bot) or by an admin
    (`manage.py link`). One account per person and platform, and an account is one person's.
    """

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="chat_accounts")
    platform = models.CharField(max_length=16, choices=Platform.choices)
    external_id = models.CharField(max_length=200, help_text="The platform's own id of the user (a number for "
                                   "Telegram and Discord, an AAD object id or 29:… id for Teams).")  # fmt: skip
    name = models.CharField(max_length=200, blank=True, help_text="What the platform called them when linked.")
    linked_at = models.DateTimeField(default=timezone.now)
    linked_by = models.CharField(max_length=200, blank=True, help_text="Empty: by themselves, with a code.")

    class Meta:
        ordering = ["platform", "user__username"]
        constraints = [
            models.UniqueConstraint(fields=["platform", "external_id"], name="one_person_per_chat_account"),
            models.UniqueConstraint(fields=["user", "platform"], name="one_chat_account_per_platform"),
        ]

    def __str__(self) -> str:
        return f"{self.user} on {self.get_platform_display()} ({self.name or self.external_id})"

    @classmethod
    def person(cls, platform: str, external_id: str) -> Any:
        """The active Hook Bridge person whose account this is, or None."""
        found = cls.objects.filter(platform=platform, external_id=external_id, user__is_active=True)
        account = found.select_related("user").first()
        return account.user if account is not None else None

    @classmethod
    def link(cls, user: Any, platform: str, external_id: str, name: str = "", by: str = "") -> ChatAccount:
        """`user`'s account on `platform` is `external_id` from now on (replacing their earlier one); ValueError when
        that account is another person's."""
        # Locked and checked together: two codes used at once for one chat account cannot both take it.
        with transaction.atomic():
            taken = cls.objects.select_for_update().filter(platform=platform, external_id=external_id).first()
            if taken is not None and taken.user_id != user.pk:
                raise ValueError(f"that {Platform(platform).label} account is linked to someone else already")
            cls.objects.filter(user=user, platform=platform).exclude(external_id=external_id).delete()
            account, _ = cls.objects.update_or_create(
                user=user, platform=platform, defaults={"external_id": external_id, "name": name[:200],
                                                        "linked_at": timezone.now(), "linked_by": by[:200]},
            )  # fmt: skip
        return account


LINK_CODE_MINUTES = 15
# Letters and digits a person reads and types without mistaking one for another (no 0/O, 1/I/L).
LINK_CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"


class LinkCode(models.Model):
    """A one-time code a person gives a chat bot to link their account there: valid LINK_CODE_MINUTES, used once."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="link_codes")
    platform = models.CharField(max_length=16, choices=Platform.choices)
    code = models.CharField(max_length=16, unique=True)
    expires_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"a {self.get_platform_display()} link code of {self.user}"

    @classmethod
    def issue(cls, user: Any, platform: str) -> LinkCode:
        """A new code for `user` on `platform`; their earlier unused ones for it stop working."""
        cls.objects.filter(user=user, platform=platform).delete()
        code = "".join(secrets.choice(LINK_CODE_ALPHABET) for _ in range(10))
        expires = timezone.now() + timedelta(minutes=LINK_CODE_MINUTES)
        return cls.objects.create(user=user, platform=platform, code=code, expires_at=expires)

    @classmethod
    def redeem(cls, platform: str, code: str, external_id: str, name: str) -> ChatAccount:
        """Link the chat account `external_id` to the person whose code this is; ValueError saying why not."""
        wanted = code.strip().upper().replace("-", "").replace(" ", "")
        if not wanted or len(wanted) > 16:
            raise ValueError("that is not a link code: copy the one your Notifications page shows")
        # Deleted as it is read (one query): a code is used once, even by two presses at the same moment.
        with transaction.atomic():
            found = cls.objects.select_for_update().filter(platform=platform, code=wanted).first()
            if found is None:
                raise ValueError("that code is not known here (a code is used once): make a new one on your "
                                 "Notifications page")  # fmt: skip
            found.delete()
            if found.expires_at < timezone.now():
                raise ValueError(f"that code is more than {LINK_CODE_MINUTES} minutes old: make a new one")
            if not found.user.is_active:
                raise ValueError("that code's person may no longer sign in here")
            return ChatAccount.link(found.user, platform, external_id, name)


class Status(models.TextChoices):
    DUE = "due", "due"
    SENDING = "sending", "sending"
    SENT = "sent", "sent"
    FAILED = "failed", "failed"
    SKIPPED = "skipped", "skipped"


class Purpose(models.TextChoices):
    NOTIFY = "notify", "tell of the question"
    UPDATE = "update", "say how it ended"


class Delivery(models.Model):
    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="deliveries")
    purpose = models.CharField(max_length=8, choices=Purpose.choices, default=Purpose.NOTIFY)
    channel = models.CharField(max_length=16)
    target = models.CharField(
        max_length=1000, help_text="A Slack channel, the e-mail addresses, a URL, a person's browser."
    )
    due_at = models.DateTimeField()
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.DUE)
    attempts = models.PositiveSmallIntegerField(default=0)
    last_error = models.TextField(blank=True)
    claimed_at = models.DateTimeField(null=True, blank=True)
    # A claim is a lease, renewed while its worker sends: a step whose worker died is due again when it lapses.
    lease_until = models.DateTimeField(null=True, blank=True)
    claim_token = models.UUIDField(null=True, blank=True, editable=False)
    # Set just before a message leaves, cleared with the outcome: a step taken over with this set may have
    # gone out already, so the new sender looks for it first (notify.dispatcher) instead of sending it twice.
    sending_since = models.DateTimeField(null=True, blank=True)
    sent_at = models.DateTimeField(null=True, blank=True)
    # Where a chat platform put the message (Slack's channel ID and ts; Telegram's chat and message_id; Discord's
    # channel and message; Teams' conversation and activity): what an update and a button press name.
    posted_in = models.CharField(max_length=400, blank=True)
    posted_id = models.CharField(max_length=200, blank=True)
    # A push step goes to one browser; removed (its service forgot it, or its person turned it off), the step
    # has nowhere to go.
    push_subscription = models.ForeignKey(
        PushSubscription, null=True, blank=True, on_delete=models.SET_NULL, related_name="deliveries"
    )
    # When the notification's Allow, Deny or Open was used: its token acts once.
    acted_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name_plural = "deliveries"
        ordering = ["due_at", "id"]
        indexes = [models.Index(fields=["status", "due_at"], name="delivery_due")]
        # One row per question, channel and target: a second worker hearing the same ask adds nothing, and a push
        # step has one row per browser.
        constraints = [
            models.UniqueConstraint(fields=["question", "purpose", "channel", "target"], name="one_delivery_per_step")
        ]

    def __str__(self) -> str:
        return f"{policy.NAMES.get(self.channel, self.channel)} for {self.question_id}: {self.status}"

    @classmethod
    def after_question_ended(cls, question_id: uuid.UUID) -> None:
        """Steps not yet sent are dropped; each chat message and push notification sent is to say how it ended."""
        # A step in doubt (its sender died, or its look-up failed, mid-send) may be out already: it stays due, to
        # be looked up and either recorded and updated or skipped then.
        cls.objects.filter(
            question_id=question_id, purpose=Purpose.NOTIFY, status=Status.DUE, sending_since__isnull=True
        ).update(status=Status.SKIPPED, last_error="The question ended before this step was due.")
        posted = cls.objects.filter(
            question_id=question_id, purpose=Purpose.NOTIFY, channel__in=policy.CHATS, status=Status.SENT
        ).exclude(posted_id="")
        for sent in posted:
            cls.objects.get_or_create(
                question_id=question_id, purpose=Purpose.UPDATE, channel=sent.channel,
                defaults={"target": sent.target, "due_at": timezone.now(), "posted_in": sent.posted_in,
                          "posted_id": sent.posted_id},
            )  # fmt: skip
        pushed = cls.objects.filter(
            question_id=question_id, purpose=Purpose.NOTIFY, channel="push", status=Status.SENT,
            push_subscription__isnull=False,
        )  # fmt: skip
        for sent in pushed:
            cls.objects.get_or_create(
                question_id=question_id, purpose=Purpose.UPDATE, channel="push", target=sent.target,
                defaults={"due_at": timezone.now(), "push_subscription_id": sent.push_subscription_id},
            )  # fmt: skip

    @staticmethod
    def claimable(now: datetime) -> models.Q:
        """Due, or claimed by a worker whose lease lapsed (it died, or lost the database, while sending)."""
        return models.Q(status=Status.DUE, due_at__lte=now) | models.Q(status=Status.SENDING, lease_until__lt=now)

    def claim(self, lease_seconds: float = 10.0) -> bool:
        """Take this step to send it, for `lease_seconds` unless renewed; False when another worker has it.

        A conditional UPDATE: of several workers reading the same row, one takes it.
        """
        now = timezone.now()
        token = uuid.uuid4()
        lease = now + timedelta(seconds=lease_seconds)
        taken = (
            Delivery.objects.filter(pk=self.pk)
            .filter(Delivery.claimable(now))
            .update(status=Status.SENDING, claimed_at=now, lease_until=lease, claim_token=token)
        )
        if taken:
            self.status, self.claimed_at, self.lease_until, self.claim_token = Status.SENDING, now, lease, token
        return bool(taken)

    def renew(self, lease_seconds: float) -> bool:
        """Hold the claim a while longer; False when it was lost (the lease lapsed and another worker took it)."""
        lease = timezone.now() + timedelta(seconds=lease_seconds)
        return bool(
            Delivery.objects.filter(pk=self.pk, claim_token=self.claim_token, status=Status.SENDING).update(
                lease_until=lease
            )
        )

    def spend(self) -> bool:
        """Use this notification's action: True the first time, False ever after (a conditional UPDATE)."""
        now = timezone.now()
        spent = Delivery.objects.filter(pk=self.pk, acted_at__isnull=True).update(acted_at=now)
        if spent:
            self.acted_at = now
        return bool(spent)

    def mark_sending(self) -> None:
        """The message is about to leave: once set, a taker-over must look for it before sending again."""
        self.sending_since = timezone.now()
        Delivery.objects.filter(pk=self.pk, claim_token=self.claim_token).update(sending_since=self.sending_since)

    def record(
        self, *, ok: bool, error: str = "", took_ms: int = 0, retry_in: float | None = None, in_doubt: bool = False
    ) -> None:
        """An attempt's outcome: sent; due again after `retry_in` seconds; or failed for good.

        `in_doubt`: whether the message went out is still not known, so `sending_since` stays for the next try.
        """
        now = timezone.now()
        DeliveryAttempt.objects.create(delivery=self, at=now, ok=ok, error=error[:2000], took_ms=took_ms)
        changes: dict[str, object] = {"attempts": self.attempts + 1, "last_error": error[:2000], "lease_until": None}
        if not in_doubt:
            changes["sending_since"] = None
        if ok:
            changes |= {"status": Status.SENT, "sent_at": now}
        elif retry_in is not None:
            changes |= {"status": Status.DUE, "due_at": now + timedelta(seconds=retry_in)}
        else:
            changes |= {"status": Status.FAILED}
        Delivery.objects.filter(pk=self.pk).update(**changes)
        for name, value in changes.items():
            setattr(self, name, value)


class DeliveryAttempt(models.Model):
    delivery = models.ForeignKey(Delivery, on_delete=models.CASCADE, related_name="tries")
    at = models.DateTimeField(default=timezone.now)
    ok = models.BooleanField()
    error = models.TextField(blank=True)
    took_ms = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["at", "id"]

    def __str__(self) -> str:
        return f"{'sent' if self.ok else 'failed'} at {self.at:%H:%M:%S}" + (f": {self.error}" if self.error else "")


class AuditStreamCursor(models.Model):
    """How far the audit record has been streamed to HOOKBRIDGE_AUDIT_STREAM_URL (one row): the next post starts
    after `sent_through`. Moved only forward, and only after the receiver took the post, so every entry reaches it
    at least once; two workers posting the same batch send it twice, and the receiver drops repeats by seq."""

    sent_through = models.PositiveBigIntegerField(default=0)
    failing_since = models.DateTimeField(null=True, blank=True)
    last_error = models.CharField(max_length=300, blank=True)

    def __str__(self) -> str:
        return f"audit streamed through #{self.sent_through}"
