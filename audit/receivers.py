"""Sign-ins and refused sign-ins, from Django's own signals: every login path (the login page, the admin's,
OAuth's) goes through them."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.signals import user_logged_in, user_login_failed
from django.db.models.signals import post_save, pre_save
from django.dispatch import receiver

from audit import chain
from core import acting

# What about a person decides what they may do: recorded when it changes (a password's change is not shown).
PERSON_FIELDS = ("username", "email", "is_active", "is_staff", "is_superuser")


def _ip(request: Any) -> str:
    return str(getattr(request, "META", {}).get("REMOTE_ADDR", "") or "") if request is not None else ""


@receiver(user_logged_in, dispatch_uid="audit-signin")
def signed_in(sender: Any, request: Any, user: Any, **kwargs: Any) -> None:
    who = acting.person(user)
    chain.record("signin.succeeded", who, target=f"person {user.get_username()}", target_id=user.pk, ip=_ip(request))


@receiver(user_login_failed, dispatch_uid="audit-signin-failed")
def sign_in_refused(sender: Any, credentials: dict[str, Any], request: Any = None, **kwargs: Any) -> None:
    # Django hands the credentials with the password already masked; only the name given is kept.
    name = str(credentials.get("username", ""))[:150]
    someone = acting.Actor("system", "sign-in")
    chain.record("signin.failed", someone, target=f"person {name}", details={"username": name}, ip=_ip(request))


def _touches_person_fields(update_fields: Any) -> bool:
    # A save of other fields only (a sign-in's last_login) changes nothing recorded: no look-up, no entry.
    return update_fields is None or bool(set(update_fields) & set(PERSON_FIELDS))


@receiver(pre_save, sender=settings.AUTH_USER_MODEL, dispatch_uid="audit-person-before")
def person_before(sender: Any, instance: Any, update_fields: Any = None, **kwargs: Any) -> None:
    if not _touches_person_fields(update_fields):
        return
    if instance.pk is None:
        instance._audit_before = None
        return
    instance._audit_before = sender._base_manager.filter(pk=instance.pk).values(*PERSON_FIELDS).first()


@receiver(post_save, sender=settings.AUTH_USER_MODEL, dispatch_uid="audit-person-after")
def person_after(sender: Any, instance: Any, created: bool, update_fields: Any = None, **kwargs: Any) -> None:
    """A person made, (de)activated or given or stripped of staff or superuser: who may see and decide changed."""
    if not _touches_person_fields(update_fields):
        return
    before = getattr(instance, "_audit_before", None)
    after = {name: getattr(instance, name) for name in PERSON_FIELDS}
    target = f"person {instance.get_username()}"
    if created or before is None:
        chain.record("person.created", target=target, target_id=instance.pk, details={"after": after})
        return
    changed = {name: [before[name], after[name]] for name in PERSON_FIELDS if before[name] != after[name]}
    if not changed:
        return
    if "is_active" in changed:
        action = "person.activated" if after["is_active"] else "person.deactivated"
    else:
        action = "person.changed"
    chain.record(action, target=target, target_id=instance.pk, details={"changes": changed})
