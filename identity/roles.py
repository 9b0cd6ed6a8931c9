"""Groups to project roles: HOOKBRIDGE_OIDC_ROLES, `GROUP=PROJECT:ROLE`, comma-separated.

A person's groups are the ones the directory last said (their ID token's groups claim at sign-in, or SCIM's
group members); each mapped group gives its role in its project, the highest where several name one project.
Only memberships the directory gave are changed or taken away, so a role given by hand stays — unless
HOOKBRIDGE_OIDC_ROLES_ONLY, when the directory alone says who is where. Groups nobody mapped are ignored.
"""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import transaction

from projects.models import RANKS, Membership, MembershipSource, Project, Role

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Grant:
    group: str
    project: str
    role: str


def parse(text: str) -> list[Grant]:
    """Each `GROUP=PROJECT:ROLE`; ValueError naming the entry that is not one."""
    grants = []
    for entry in (part.strip() for part in text.split(",")):
        if not entry:
            continue
        group, equals, target = entry.rpartition("=")
        project, colon, role = target.rpartition(":")
        if not (equals and colon and group.strip() and project.strip()):
            raise ValueError(f"HOOKBRIDGE_OIDC_ROLES: '{entry}' is not GROUP=PROJECT:ROLE")
        if role.strip() not in Role.values:
            raise ValueError(f"HOOKBRIDGE_OIDC_ROLES: '{entry}': the role must be one of {', '.join(Role.values)}")
        grants.append(Grant(group.strip(), project.strip(), role.strip()))
    return grants


@functools.cache
def _grants(text: str) -> tuple[Grant, ...]:
    return tuple(parse(text))


def grants() -> tuple[Grant, ...]:
    return _grants(settings.HOOKBRIDGE_OIDC_ROLES)


def mapped_groups() -> set[str]:
    return {grant.group for grant in grants()}


def wanted(groups: set[str]) -> dict[str, str]:
    """Project name (lower case: names are matched so) -> the highest role the groups give there."""
    roles: dict[str, str] = {}
    for grant in grants():
        project = grant.project.lower()
        if grant.group in groups and RANKS[grant.role] > RANKS.get(roles.get(project, ""), 0):
            roles[project] = grant.role
    return roles


def apply(person: Any) -> None:
    """Set the person's project roles from their directory groups."""
    groups = set(person.directory_groups.values_list("display_name", flat=True))
    roles = wanted(groups)
    only = settings.HOOKBRIDGE_OIDC_ROLES_ONLY
    # Atomic: their roles move from the old set to the new in one step, never through "in no project at all".
    with transaction.atomic():
        held = {m.project.name.lower(): m for m in Membership.objects.filter(user=person).select_related("project")}
        for name, role in roles.items():
            membership = held.get(name)
            if membership is not None and membership.role == role and membership.source == MembershipSource.DIRECTORY:
                continue
            if membership is not None and membership.source == MembershipSource.BY_HAND and not only:
                continue  # an admin's own choice stays
            project = Project.objects.named(name).first()
            if project is None:
                logger.warning(
                    "HOOKBRIDGE_OIDC_ROLES names project %r, which does not exist: no role given there", name
                )
                continue
            project.set_member(person, role, source=MembershipSource.DIRECTORY)
        for name, membership in held.items():
            if name not in roles and (membership.source == MembershipSource.DIRECTORY or only):
                membership.delete()
