"""New people join the default project; any change of who sees what is announced (access_changed).

Open pages filter what they show by the person's projects as read when they connected: on
access_changed they read them again (core.consumers.LiveConsumer).
"""

from __future__ import annotations

from typing import Any

import django.dispatch
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from core.signals import send_on_commit
from projects.models import JOINS_BY_DIRECTORY, Membership, Project, Role

access_changed = django.dispatch.Signal()


@receiver(post_save, sender=settings.AUTH_USER_MODEL)
def new_person_joins(sender: Any, instance: Any, created: bool, raw: bool = False, **kwargs: Any) -> None:
    """A new account joins the default project: the first as its admin, others as HOOKBRIDGE_NEW_USER_ROLE."""
    if not created or raw:
        return
    first = not get_user_model().objects.exclude(pk=instance.pk).exists()
    if getattr(instance, JOINS_BY_DIRECTORY, False) and not first:
        return
    role = Role.ADMIN.value if first else settings.HOOKBRIDGE_NEW_USER_ROLE
    if role:
        Project.default().set_member(instance, role)


@receiver(post_save, sender=Membership)
@receiver(post_delete, sender=Membership)
@receiver(post_save, sender=Project)
@receiver(post_delete, sender=Project)
def _announce(sender: Any, raw: bool = False, **kwargs: Any) -> None:
    if not raw:
        send_on_commit(access_changed, sender)
