"""A token's row changed: every server process forgets what it cached of it, once the change commits."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from tokens import cache
from tokens.models import AgentToken


@receiver(post_save, sender=AgentToken)
def token_saved(sender: Any, instance: AgentToken, created: bool, **kwargs: Any) -> None:
    if not created:  # a new token is in nobody's cache
        token_hash = instance.token_hash
        transaction.on_commit(lambda: cache.forget(token_hash))


@receiver(post_delete, sender=AgentToken)
def token_deleted(sender: Any, instance: AgentToken, **kwargs: Any) -> None:
    token_hash = instance.token_hash
    transaction.on_commit(lambda: cache.forget(token_hash))
