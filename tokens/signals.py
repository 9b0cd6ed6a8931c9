"""A token's row changed: every server process forgets what it cached of it, and its open sockets close.

And access taken away from a person takes their agents' access with it (issue 37): leaving a project
(or falling below HOOKBRIDGE_TOKEN_ROLE there) revokes the tokens and OAuth grants they hold in it;
deactivating a person revokes all of theirs and closes their pages; a superuser made an ordinary
person loses their tokens for every project, and their pages reconnect to see what they may now.
"""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models.signals import post_delete, post_save, pre_save
from django.dispatch import receiver
from oauth2_provider.models import get_refresh_token_model

from core import broadcast
from core.signals import person_deactivated, send_on_commit
from projects.models import Membership, at_least
from tokens import cache
from tokens.models import AgentToken

logger = logging.getLogger(__name__)

# Where pre_save leaves a person's flags as they were, for post_save to compare.
BEFORE = "_hookbridge_flags_before"


def _gone(token: AgentToken) -> None:
    """Once the change commits: no process trusts the token any more, and every socket it holds closes."""
    token_hash, pk = token.token_hash, token.pk

    def tell() -> None:
        cache.forget(token_hash)
        broadcast.access_revoked("token", pk)

    transaction.on_commit(tell)


@receiver(post_save, sender=AgentToken)
def token_saved(sender: Any, instance: AgentToken, created: bool, **kwargs: Any) -> None:
    if created:  # a new token is in nobody's cache
        return
    token_hash = instance.token_hash
    if instance.is_active:
        transaction.on_commit(lambda: cache.forget(token_hash))  # re-scoped or moved: read again
        return
    # Revoked (or expired) by any path, the admin's change page included: the client's OAuth tokens go too.
    instance.revoke_grant()
    _gone(instance)


@receiver(post_delete, sender=AgentToken)
def token_deleted(sender: Any, instance: AgentToken, **kwargs: Any) -> None:
    instance.revoke_grant()
    _gone(instance)


@receiver(post_delete, sender=Membership)
def member_left(sender: Any, instance: Membership, **kwargs: Any) -> None:
    """Out of a project: the person's agents there stop at once (a token never outlives its maker's access)."""
    _revoke_in(instance.user_id, instance.project_id)


@receiver(post_save, sender=Membership)
def member_role_changed(sender: Any, instance: Membership, raw: bool = False, **kwargs: Any) -> None:
    if not raw and not at_least(instance.role, settings.HOOKBRIDGE_TOKEN_ROLE):
        _revoke_in(instance.user_id, instance.project_id)


def _revoke_in(user_id: int, project_id: int) -> None:
    revoked = AgentToken.disconnect_all(AgentToken.objects.filter(user_id=user_id, project_id=project_id))
    if revoked:
        logger.info("Revoked %d token(s) of person %s: no longer able to make them in project %s",
                    revoked, user_id, project_id)  # fmt: skip


@receiver(pre_save, sender=settings.AUTH_USER_MODEL)
def person_about_to_change(sender: Any, instance: Any, raw: bool = False, **kwargs: Any) -> None:
    if raw or instance.pk is None:
        return
    fields = kwargs.get("update_fields")
    if fields is not None and not {"is_active", "is_superuser"} & set(fields):
        return  # a login's last_login: nothing about access, and no query for it
    before = type(instance).objects.filter(pk=instance.pk).values("is_active", "is_superuser").first()
    setattr(instance, BEFORE, before)


@receiver(post_save, sender=settings.AUTH_USER_MODEL)
def person_changed(sender: Any, instance: Any, created: bool, raw: bool = False, **kwargs: Any) -> None:
    before = instance.__dict__.pop(BEFORE, None)
    if created or raw or before is None:
        return
    pk = instance.pk
    if before["is_active"] and not instance.is_active:
        AgentToken.disconnect_all(AgentToken.objects.filter(user_id=pk))
        for refresh in get_refresh_token_model().objects.filter(user_id=pk, revoked__isnull=True):
            refresh.revoke()
        transaction.on_commit(lambda: broadcast.access_revoked("user", pk))
        send_on_commit(person_deactivated, type(instance), user_id=pk, username=instance.get_username())
    elif before["is_superuser"] and not instance.is_superuser:
        # Only a superuser makes tokens for every project: such a token of theirs goes with the power.
        AgentToken.disconnect_all(AgentToken.objects.filter(user_id=pk, project__isnull=True))
        transaction.on_commit(lambda: broadcast.access_changed_for("user", pk))
    elif not before["is_superuser"] and instance.is_superuser:
        transaction.on_commit(lambda: broadcast.access_changed_for("user", pk))
