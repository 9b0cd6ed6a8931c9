"""The audit record verified on a schedule: the admins are mailed once when it fails, not on every run."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.contrib.auth.models import User
from django.core import mail
from django.db import connection
from django.utils import timezone

from audit import chain
from audit.models import Verification
from core.acting import Actor
from notify import audit_watch
from projects.models import Project, Role


def an_hour_later() -> None:
    Verification.objects.update(at=timezone.now() - timedelta(hours=25))


def test_a_failed_scheduled_verify_mails_the_admins_once_naming_the_entry(db: None, settings: Any) -> None:
    settings.HOOKBRIDGE_EMAIL_CONFIGURED = True
    settings.HOOKBRIDGE_AUDIT_VERIFY_HOURS = 24
    User.objects.create_superuser("root", email="root@example.com")
    ann = User.objects.create_user("ann", email="ann@example.com")
    Project.objects.create(name="shop").set_member(ann, Role.ADMIN)
    User.objects.create_user("bob", email="bob@example.com")  # no admin: not told
    for n in range(3):
        chain.record("rule.created", Actor("person", "ann"), details={"n": n})
    first = audit_watch.verify_if_due()
    assert first is not None
    assert first.ok
    assert audit_watch.verify_if_due() is None, "verified within the interval: not due"
    with connection.cursor() as cursor:
        cursor.execute("DROP TRIGGER IF EXISTS audit_entry_no_update")
        cursor.execute("UPDATE audit_entry SET actor = 'mallory' WHERE seq = 2")
    an_hour_later()
    failed = audit_watch.verify_if_due()
    assert failed is not None
    assert not failed.ok
    assert len(mail.outbox) == 1
    assert sorted(mail.outbox[0].to) == ["ann@example.com", "root@example.com"]
    assert "seq 2: its hash does not match" in mail.outbox[0].body
    an_hour_later()
    assert audit_watch.verify_if_due() is not None
    assert len(mail.outbox) == 1, "the same fault is told once"


def test_with_the_schedule_off_nothing_is_verified(db: None, settings: Any) -> None:
    settings.HOOKBRIDGE_AUDIT_VERIFY_HOURS = 0
    assert audit_watch.verify_if_due() is None
    assert not Verification.objects.exists()
