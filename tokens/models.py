"""Bearer tokens for agents and integrations.

Only a SHA-256 digest of each token is stored: a leaked database does not leak
working credentials. Tokens are long random strings, so a fast unsalted hash is
enough (the same reasoning as GitHub's and Django REST Knox's token storage).
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import models, transaction
from django.utils import timezone
from oauth2_provider.models import get_access_token_model, get_refresh_token_model

from audit import chain
from audit.audited import Audited
from core import acting, jsonapi
from projects.models import Project

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
        """Neither revoked nor expired, nor a deactivated person's: checked on every request, so a revocation holds
        at once on every worker (a person deactivated by a bulk update, which sends no signal, included)."""
        return self.filter(
            models.Q(revoked_at__isnull=True),
            models.Q(expires_at__isnull=True) | models.Q(expires_at__gt=timezone.now()),
            models.Q(user__isnull=True) | models.Q(user__is_active=True),
        )


class AgentToken(Audited):
    audit_noun = "token"
    audit_hidden = frozenset({"token_hash", "last_used_at"})
    name = models.CharField(max_length=NAME_LENGTH, help_text="Who is asking: shown on the dashboard.")
    token_hash = models.CharField(max_length=64, unique=True, editable=False)
    # The first characters of the raw token, so an admin can tell tokens apart.
    prefix = models.CharField(max_length=12, editable=False)
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)
    revoked_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    scope = models.CharField(max_length=16, choices=Scope.choices, default=Scope.AGENT)
    # Whose it is: the person who made it on their page, or who approved the OAuth client it stands for.
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE, related_name="agent_tokens"
    )
    # Set for the agent a person signed in the MCP way (tokens.oauth): that client's grant, not a secret of ours.
    oauth_client = models.ForeignKey(
        settings.OAUTH2_PROVIDER_APPLICATION_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="agent_tokens",
    )
    # The one project its agent works in, and an answering token answers in; empty: every project (a team's bot).
    project = models.ForeignKey(
        Project,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="tokens",
        help_text="The project its work belongs to; empty: every project (a bot for the whole team).",
    )
    # HOOKBRIDGE_TASKS=allowed: its agent's questions may go to the background as MCP tasks (mcpapi.tasks).
    may_ask_in_background = models.BooleanField(
        "may ask in the background",
        default=False,
        help_text="With HOOKBRIDGE_TASKS=allowed: a client that speaks MCP tasks gets its questions as tasks, "
        "and goes on working while a person answers.",
    )

    objects = AgentTokenQuerySet.as_manager()

    class Meta:
        ordering = ["name", "created_at"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…, {self.scope})"

    def audit_action(self, verb: str, changes: dict[str, Any]) -> str:
        revoked = changes.get("changes", {}).get("revoked_at")
        if verb == "changed" and revoked and revoked[0] is None:
            return "token.revoked"
        return {"created": "token.issued"}.get(verb, f"token.{verb}")

    def audit_target(self) -> str:
        return f"token {self.name} ({self.prefix}…)"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None and (self.expires_at is None or self.expires_at > timezone.now())

    @classmethod
    def issue(
        cls,
        name: str,
        *,
        scope: str = Scope.AGENT,
        expires_at: datetime | None = None,
        user: Any = None,
        project: Project | None = None,
        all_projects: bool = False,
        may_ask_in_background: bool = False,
    ) -> tuple[AgentToken, str]:
        """Create a token; the raw value is returned once and never stored.

        It works in `project` (default: the default project), or in every project with `all_projects`.
        """
        name = name.strip()
        if not name:
            raise ValueError("a token needs a name")
        if len(name) > NAME_LENGTH:
            raise ValueError(f"name: at most {NAME_LENGTH} characters, got {len(name)}")
        if problem := jsonapi.unstorable({"name": name}):
            raise ValueError(problem)
        if scope not in Scope.values:
            raise ValueError(f"scope must be one of {', '.join(Scope.values)}")
        if all_projects and project is not None:
            raise ValueError("a token works in one project or in all of them, not both")
        bound = None if all_projects else (project or Project.default())
        token = cls(
            name=name,
            scope=scope,
            expires_at=expires_at,
            user=user,
            project=bound,
            may_ask_in_background=may_ask_in_background,
        )
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
        token.mark_used()
        return token

    def mark_used(self) -> None:
        now = timezone.now()
        if self.last_used_at is None or now - self.last_used_at > LAST_USED_PRECISION:
            # At most once a minute: every /mcp request authenticates, and a write
            # per request would queue behind answers for SQLite's write lock.
            type(self).objects.filter(pk=self.pk).update(last_used_at=now)

    @classmethod
    def for_oauth_grant(cls, user: Any, client: Any, project: Project | None = None) -> AgentToken:
        """The agent a person's OAuth client acts as: one per person and client, named after both.

        It has a secret nobody knows, so only the authorization server's access tokens reach it;
        questions, sessions, limits and isolation then work as for any other agent token.
        """
        mine = cls.objects.active().filter(user=user, oauth_client=client).order_by("created_at")
        token = mine.first()
        if token is not None:
            if project is not None and token.project_id != project.pk:
                # The person approved it again, for another project: its work goes there from now on.
                token.project = project
                token.save(update_fields=["project"])
            return token
        # Two first calls at once (a client's parallel requests) must not make two agents: the
        # client's row is locked while one looks again and creates.
        with transaction.atomic():
            type(client).objects.select_for_update().filter(pk=client.pk).first()
            token = mine.first()
            if token is None:
                token = cls(name=f"{user.get_username()}'s {client.name or 'agent'}"[:NAME_LENGTH], user=user)
                token.oauth_client = client
                token.project = project or Project.default()
                token.set_new_secret()
                token.save()
                granted = {"client": client.name, "client_id": str(client.client_id)[:300]}
                chain.record("oauth.granted", acting.person(user), project=token.project, target=token.audit_target(),
                             target_id=token.pk, details=granted)  # fmt: skip
        return token

    @classmethod
    def of_oauth_grant(cls, user: Any, client: Any, issued_at: datetime) -> AgentToken | None:
        """The agent an OAuth access token issued at `issued_at` acts as; None when that agent is gone.

        Never made here: an agent is made when the person approves the client (for_oauth_grant). Revoked,
        expired or deleted, it takes every token of the grant with it; a token older than the agent (issued
        for one revoked since, before the person approved the client again) is refused too (issue 37).
        """
        agent = cls.objects.filter(user=user, oauth_client=client).order_by("-created_at", "-pk").first()
        if agent is None or not agent.is_active or issued_at < agent.created_at:
            return None
        return agent

    def revoke(self) -> None:
        if self.revoked_at is None:
            self.revoked_at = timezone.now()
            self.save(update_fields=["revoked_at"])

    def revoke_grant(self) -> None:
        """Every access and refresh token this agent's OAuth client holds for its person (no client: nothing)."""
        if self.oauth_client_id is None or self.user_id is None:
            return
        grant = {"user_id": self.user_id, "application_id": self.oauth_client_id}
        for refresh in get_refresh_token_model().objects.filter(revoked__isnull=True, **grant):
            refresh.revoke()
        for access in get_access_token_model().objects.filter(**grant):
            access.revoke()

    def disconnect(self) -> None:
        """Revoke this agent; for an OAuth grant, every access and refresh token its client holds for the person too."""
        # All or nothing: a client left with a live refresh token would mint itself a new access token.
        with transaction.atomic():
            self.revoke()
            self.revoke_grant()

    @classmethod
    def disconnect_all(cls, tokens: models.QuerySet[AgentToken]) -> int:
        """Disconnect every live token of `tokens`; how many there were."""
        live = list(tokens.filter(revoked_at__isnull=True))
        for token in live:
            token.disconnect()
        return len(live)


class UsedAuthorizationCode(models.Model):
    """An authorization code once exchanged, and the token family it began (RFC 6749 §4.1.2, RFC 9700 §4.5.3).

    The library deletes a code when it is exchanged, so a replay would be only "invalid_grant": kept here,
    a second use also revokes every token the first one issued, and those refreshed from it.
    """

    code_checksum = models.CharField(max_length=64, unique=True)
    token_family = models.UUIDField(null=True, blank=True)
    access_checksum = models.CharField(max_length=64, blank=True)
    used_at = models.DateTimeField(default=timezone.now, db_index=True)

    # A code lives 60 s; a replay after a day has long been refused for its age, so the row can go.
    KEPT = timedelta(days=1)

    def __str__(self) -> str:
        return f"code {self.code_checksum[:8]}… used at {self.used_at:%Y-%m-%d %H:%M:%S}"


class OAuthRegistration(models.Model):
    """A client registered through /oauth/register/, and from where: what the per-address limit counts."""

    address = models.CharField(max_length=64, db_index=True)
    client_id = models.CharField(max_length=200)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    def __str__(self) -> str:
        return f"{self.client_id} from {self.address}"
