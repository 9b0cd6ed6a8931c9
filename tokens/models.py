"""Bearer tokens for agents and integrations.

Only a SHA-256 digest of each token is stored: a leaked database does not leak
working credentials. Tokens are long random strings, so a fast unsalted hash is
enough (the same reasoning as GitHub's and Django REST Knox's token storage).
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import datetime, timedelta

from django.db import models
from django.utils import timezone

from core import jsonapi

TOKEN_PREFIX = "hb_"
LAST_USED_PRECISION = timedelta(minutes=1)


def digest(raw_token: str) -> str:
    return hashlib.sha256(raw_token.encode()).hexdigest()


NAME_LENGTH = 100


class Scope(models.TextChoices):
    AGENT = "agent", "Agent: calls the MCP tools"
    ANSWER = "answer", "Answering: answers and dismisses questions through the JSON API"


class AgentTokenQuerySet(models.QuerySet["AgentToken"]):
    def active(self) -> AgentTokenQuerySet:
        """Neither revoked nor expired: checked on every request, so a revocation holds at once on every worker."""
        return self.filter(revoked_at__isnull=True).filter(
            models.Q(expires_at__isnull=True) | models.Q(expires_at__gt=timezone.now())
        )


class AgentToken(models.Model):
    name = models.CharField(max_length=NAME_LENGTH, help_text="Who is asking: shown on the dashboard.")
    token_hash = models.CharField(max_length=64, unique=True, editable=False)
    # The first characters of the raw token, so an admin can tell tokens apart.
    prefix = models.CharField(max_length=12, editable=False)
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)
    revoked_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    scope = models.CharField(max_length=16, choices=Scope.choices, default=Scope.AGENT)

    objects = AgentTokenQuerySet.as_manager()

    class Meta:
        ordering = ["name", "created_at"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…, {self.scope})"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None and (self.expires_at is None or self.expires_at > timezone.now())

    @classmethod
    def issue(
        cls, name: str, *, scope: str = Scope.AGENT, expires_at: datetime | None = None
    ) -> tuple[AgentToken, str]:
        """Create a token; the raw value is returned once and never stored."""
        name = name.strip()
        if not name:
            raise ValueError("a token needs a name")
        if len(name) > NAME_LENGTH:
            raise ValueError(f"name: at most {NAME_LENGTH} characters, got {len(name)}")
        if problem := jsonapi.unstorable({"name": name}):
            raise ValueError(problem)
        if scope not in Scope.values:
            raise ValueError(f"scope must be one of {', '.join(Scope.values)}")
        token = cls(name=name, scope=scope, expires_at=expires_at)
        raw = token.set_new_secret()
        token.save()
        return token, raw

    def set_new_secret(self) -> str:
        """Give this (unsaved) token a fresh secret and return the raw value."""
        raw = TOKEN_PREFIX + secrets.token_urlsafe(32)
        self.token_hash, self.prefix = digest(raw), raw[:10]
        return raw

    @classmethod
    def authenticate(cls, raw_token: str) -> AgentToken | None:
        if not raw_token:
            return None
        token = cls.objects.active().filter(token_hash=digest(raw_token)).first()
        if token is None:
            return None
        now = timezone.now()
        if token.last_used_at is None or now - token.last_used_at > LAST_USED_PRECISION:
            # At most once a minute: every /mcp request authenticates, and a write
            # per request would queue behind answers for SQLite's write lock.
            cls.objects.filter(pk=token.pk).update(last_used_at=now)
        return token

    def revoke(self) -> None:
        if self.revoked_at is None:
            self.revoked_at = timezone.now()
            self.save(update_fields=["revoked_at"])
