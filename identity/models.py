"""People and groups as the company's directory knows them (OIDC sign-in and SCIM provisioning).

Django's own User stays the person; `Identity` adds what the identity provider calls them (its subject,
SCIM's id and externalId), `DirectoryGroup` the groups it puts them in, whose names HOOKBRIDGE_OIDC_ROLES
maps to project roles (identity.roles).
"""

from __future__ import annotations

import hashlib
import re
import secrets
import uuid
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import models, transaction
from django.db.models import Q
from django.utils import timezone

from audit import chain
from audit.audited import Audited
from identity import roles
from projects.models import JOINS_BY_DIRECTORY

SCIM_TOKEN_PREFIX = "hbscim_"


class Identity(models.Model):
    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="identity")
    # SCIM's `id`: ours to give, never reused, and not the person's database key (RFC 7643 3.1).
    scim_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    external_id = models.CharField(max_length=255, blank=True, help_text="SCIM's externalId: the directory's own id.")
    issuer = models.CharField(max_length=500, blank=True)
    subject = models.CharField(max_length=255, blank=True, help_text="The identity provider's `sub` for this person.")
    display_name = models.CharField(max_length=255, blank=True)
    provisioned = models.BooleanField(default=False, help_text="Made or changed through SCIM.")
    # What else the directory sent (phone numbers, the enterprise extension...), given back as it was sent.
    scim_resource = models.JSONField(default=dict, blank=True)
    # Deleted through SCIM: the person stays, deactivated, for the history they made; their resource is gone.
    removed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    updated_at = models.DateTimeField(auto_now=True)
    last_signin_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name_plural = "identities"
        constraints = [
            models.UniqueConstraint(
                fields=["issuer", "subject"], condition=~Q(subject=""), name="one_person_per_subject"
            )
        ]

    def __str__(self) -> str:
        return f"{self.user} ({self.subject or self.external_id or 'not signed in yet'})"


class DirectoryGroup(Audited):
    audit_noun = "group"
    scim_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    display_name = models.CharField(max_length=255, unique=True)
    external_id = models.CharField(max_length=255, blank=True)
    members = models.ManyToManyField(settings.AUTH_USER_MODEL, related_name="directory_groups", blank=True)
    # How the directory names each member (SCIM id -> its `display`), given back as sent; else their username.
    member_display = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["display_name"]

    def __str__(self) -> str:
        return self.display_name

    def set_members(self, people: list[Any]) -> None:
        """The directory says who is in the group now: each person who joined or left gets their roles again."""
        # Atomic: the members, each person's project roles and the record of both change together or not at all.
        with transaction.atomic():
            before = {person.pk: person for person in self.members.all()}
            after = {person.pk: person for person in people}
            joined = [after[pk] for pk in after.keys() - before.keys()]
            left = [before[pk] for pk in before.keys() - after.keys()]
            if not joined and not left:
                return
            self.members.add(*joined)
            self.members.remove(*left)
            chain.record(
                "group.members_changed",
                target=f"group {self.display_name}",
                target_id=self.pk,
                details={
                    "joined": sorted(p.get_username() for p in joined),
                    "left": sorted(p.get_username() for p in left),
                },
            )
            for person in joined + left:
                roles.apply(person)

    def delete(self, *args: Any, **kwargs: Any) -> Any:
        with transaction.atomic():
            people = list(self.members.all())
            deleted = super().delete(*args, **kwargs)
            for person in people:
                roles.apply(person)
            return deleted


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class ScimTokenQuerySet(models.QuerySet["ScimToken"]):
    def matching(self, token: str) -> ScimToken | None:
        return self.filter(token_hash=_digest(token), revoked_at__isnull=True).first()


class ScimToken(Audited):
    """A bearer token a directory provisions with (besides HOOKBRIDGE_SCIM_TOKEN); only its digest is kept."""

    audit_noun = "scim_token"
    audit_hidden = frozenset({"token_hash"})

    name = models.CharField(max_length=100, help_text="Which directory sends it, e.g. “Okta production”.")
    token_hash = models.CharField(max_length=64, unique=True, editable=False)
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)
    revoked_at = models.DateTimeField(null=True, blank=True)

    objects = ScimTokenQuerySet.as_manager()

    class Meta:
        verbose_name = "SCIM token"

    def __str__(self) -> str:
        return self.name

    @classmethod
    def issue(cls, name: str, **kwargs: Any) -> tuple[ScimToken, str]:
        token = SCIM_TOKEN_PREFIX + secrets.token_urlsafe(32)
        return cls.objects.create(name=name, token_hash=_digest(token), **kwargs), token


USERNAME_ALLOWED = re.compile(r"[^\w.@+-]")


def unique_username(wanted: str) -> str:
    """A username nobody has, close to `wanted` (Django's characters, 150 at most): e-mail, then e-mail-2, ..."""
    base = USERNAME_ALLOWED.sub("-", wanted.strip())[:140] or "person"
    taken = get_user_model().objects.filter(username__iexact=base).exists()
    if not taken:
        return base
    number = 2
    while get_user_model().objects.filter(username__iexact=f"{base}-{number}").exists():
        number += 1
    return f"{base}-{number}"


def new_person(username: str, **fields: Any) -> Any:
    """A person the directory made: no local password, and no default-project role (their groups give roles)."""
    person = get_user_model()(username=unique_username(username), **fields)
    person.set_unusable_password()
    setattr(person, JOINS_BY_DIRECTORY, True)
    person.save()
    return person


def set_groups(person: Any, names: list[str]) -> bool:
    """The groups the directory says the person is in now (a sign-in's claim); their roles follow. True if changed."""
    known = set(DirectoryGroup.objects.filter(display_name__in=names).values_list("display_name", flat=True))
    wanted = {name for name in names if name in known or name in roles.mapped_groups()}
    # Atomic: the groups, the roles and the entry that records them land together.
    with transaction.atomic():
        current = {group.display_name: group for group in person.directory_groups.all()}
        left = [group for name, group in current.items() if name not in wanted]
        joined = [
            DirectoryGroup.objects.get_or_create(display_name=name)[0] for name in sorted(wanted - current.keys())
        ]
        if not left and not joined:
            return False
        person.directory_groups.remove(*left)
        person.directory_groups.add(*joined)
        chain.record(
            "person.groups_changed",
            target=f"person {person.get_username()}",
            target_id=person.pk,
            details={"joined": [g.display_name for g in joined], "left": sorted(g.display_name for g in left)},
        )
        return True


def sign_in(
    issuer: str,
    subject: str,
    *,
    email: str,
    email_verified: bool,
    username: str,
    first_name: str,
    last_name: str,
    display_name: str,
    groups: list[str] | None,
) -> Any:
    """The person the provider signed in: found by its subject, else a person SCIM made for them, else new."""
    # Atomic: two first sign-ins of one person at once (two tabs) make one person, not two.
    with transaction.atomic():
        identity = (
            Identity.objects.select_for_update().select_related("user").filter(issuer=issuer, subject=subject).first()
        )
        if identity is None:
            identity = _provisioned_for(username, email if email_verified else "")
            if identity is not None:
                identity.issuer, identity.subject = issuer, subject
        if identity is None:
            # Never the subject: it is opaque (an Entra object id), and pages show the username.
            person = new_person(
                username or email or display_name or "person",
                email=email,
                first_name=first_name[:150],
                last_name=last_name[:150],
            )
            identity = Identity(user=person, issuer=issuer, subject=subject)
        person = identity.user
        given = {"email": email, "first_name": first_name[:150], "last_name": last_name[:150]}
        changed = [name for name, value in given.items() if value and getattr(person, name) != value]
        for name in changed:
            setattr(person, name, given[name])
        if changed:
            person.save(update_fields=changed)
        identity.display_name = display_name[:255] or identity.display_name
        identity.last_signin_at = timezone.now()
        identity.save()
        if groups is not None:
            set_groups(person, groups)
        roles.apply(person)
        return person


def _provisioned_for(username: str, email: str) -> Identity | None:
    """A person SCIM provisioned who has not signed in yet, by their userName, or their e-mail when verified."""
    unlinked = Identity.objects.select_for_update().select_related("user").filter(provisioned=True, subject="")
    if username:
        found = unlinked.filter(user__username__iexact=username).first()
        if found is not None:
            return found
    if email:
        return unlinked.filter(Q(user__email__iexact=email) | Q(user__username__iexact=email)).first()
    return None


class Passkey(Audited):
    """A passkey a person signs in with instead of a password (WebAuthn, the `webauthn` library: identity.passkeys)."""

    audit_noun = "passkey"
    audit_hidden = frozenset({"public_key", "sign_count", "last_used_at"})
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="passkeys")
    name = models.CharField(max_length=100, help_text="Which device or password manager holds it.")
    credential_id = models.CharField(max_length=1400, unique=True, editable=False)  # base64url, as browsers send it
    public_key = models.BinaryField(editable=False)
    sign_count = models.PositiveBigIntegerField(default=0, editable=False)
    transports = models.JSONField(default=list, blank=True, editable=False)
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        ordering = ["created_at"]

    def __str__(self) -> str:
        return f"{self.name} ({self.user})"

    def audit_target(self) -> str:
        return f"passkey {self.name} of {self.user.get_username()}"[:300]

    def used(self, sign_count: int) -> None:
        # Not through save(): a sign-in is recorded once (signin.succeeded), not as a change of the passkey too.
        Passkey.objects.filter(pk=self.pk).update(sign_count=sign_count, last_used_at=timezone.now())


class UsedAssertion(models.Model):
    """An ID-JAG's `jti`, spent (identity.idjag): the same assertion never buys a second token."""

    digest = models.CharField(max_length=64, unique=True)
    expires_at = models.DateTimeField(db_index=True)

    def __str__(self) -> str:
        return self.digest[:12]
