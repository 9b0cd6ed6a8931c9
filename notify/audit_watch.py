"""The audit record verified on a schedule (HOOKBRIDGE_AUDIT_VERIFY_HOURS), and the admins told by e-mail the
first time it fails: a record nobody checks proves nothing until someone does. The watch also signs the head of a
record that went quiet (HOOKBRIDGE_AUDIT_CHECKPOINT_MINUTES after its last checkpoint).

Every server process runs the watch; a run is skipped when any process verified within the interval, so a
team of workers verifies about once an interval between them.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.mail import send_mail
from django.utils import timezone

from audit import chain
from audit.models import Verification
from core import runtime
from core.db import database_sync_to_async
from projects.models import Membership, Role

logger = logging.getLogger(__name__)

TASK = "audit-verify"
# How often a process looks whether a verify is due: often enough to keep to the interval, rarely enough to cost
# nothing.
LOOK_EVERY = 300.0


def admin_addresses() -> list[str]:
    """Who is told: every active superuser and every project's admins, with an e-mail address."""
    people = get_user_model().objects.filter(is_active=True).exclude(email="")
    superusers = set(people.filter(is_superuser=True).values_list("email", flat=True))
    admins = set(
        Membership.objects.filter(role=Role.ADMIN, user__is_active=True)
        .exclude(user__email="")
        .values_list("user__email", flat=True)
    )
    return sorted(superusers | admins)


def verify_if_due() -> chain.Verified | None:
    """Verify when nobody has within the interval; on a failure that is new, mail the admins. None: not due."""
    hours = settings.HOOKBRIDGE_AUDIT_VERIFY_HOURS
    if not hours:
        return None
    last = Verification.objects.order_by("-pk").first()
    if last is not None and timezone.now() - last.at < timedelta(hours=hours):
        return None
    result = chain.verify_and_keep()
    if result.ok:
        return result
    logger.error("The audit record failed verification: %s", result.problem)
    if last is not None and not last.ok and last.problem == result.problem:
        return result  # told already; the admin page says it too
    recipients = admin_addresses()
    if recipients and settings.HOOKBRIDGE_EMAIL_CONFIGURED:
        send_mail(
            "Hook Bridge: the audit record failed verification",
            f"The scheduled verify of the audit record failed: {result.problem}.\n\n"
            "Something changed the record after it was written. Run `hookbridge audit verify` to see it again; "
            "the admin's audit pages keep every run. docs/audit.md says what each fault means.\n",
            settings.HOOKBRIDGE_EMAIL_FROM,
            recipients,
        )
    return result


async def _watch_forever() -> None:
    while True:
        await asyncio.sleep(LOOK_EVERY)
        try:
            await database_sync_to_async(chain.sign_head_if_due)()
            await database_sync_to_async(verify_if_due)()
        except Exception:
            logger.warning("Could not verify the audit record; trying again later", exc_info=True)


def ensure_running() -> None:
    """Start this process's watch on the running loop (once; again if that loop has gone): it signs a quiet
    record's head, and verifies when HOOKBRIDGE_AUDIT_VERIFY_HOURS says."""
    runtime.keep_running(TASK, _watch_forever)
