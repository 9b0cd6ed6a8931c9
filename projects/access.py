"""Who sees and does what: one person's (or one token's) roles, read once and asked everywhere.

Every page, push and API that shows an agent's work filters through an Access, so a
person sees only the projects they are a member of. A superuser, and a token made for
every project, see everything.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from django.core.exceptions import PermissionDenied
from django.db import models
from django.http import Http404

from projects.models import Membership, Project, Role, at_least

M = TypeVar("M", bound=models.Model)
QS = TypeVar("QS", bound=models.QuerySet[Any])

# Where a person's Access is kept on their user object for the rest of the request.
CACHED = "_hookbridge_access"


@dataclass(frozen=True)
class Access:
    everything: bool = False
    roles: Mapping[int, str] = field(default_factory=dict)

    def role(self, project_id: int | None) -> str | None:
        if self.everything:
            return Role.ADMIN.value
        return self.roles.get(project_id) if project_id is not None else None

    def sees(self, project_id: int | None) -> bool:
        return self.role(project_id) is not None

    def may(self, project_id: int | None, role: str) -> bool:
        return at_least(self.role(project_id), role)

    def may_answer(self, project_id: int | None) -> bool:
        return self.may(project_id, Role.ANSWERER)

    @property
    def project_ids(self) -> frozenset[int] | None:
        """The projects seen, or None for every one."""
        return None if self.everything else frozenset(self.roles)

    def viewing_ids(self) -> frozenset[int]:
        """The projects only looked at (a viewer there): their cards carry no answer controls."""
        return frozenset(pk for pk, role in self.roles.items() if role == Role.VIEWER)

    def answering_ids(self) -> frozenset[int]:
        return frozenset(pk for pk, role in self.roles.items() if at_least(role, Role.ANSWERER))

    def visible(self, queryset: QS, through: str = "project") -> QS:
        """`queryset` cut to the projects seen; `through`: the path to the row's project."""
        if self.everything:
            return queryset
        return queryset.filter(**{f"{through}__in": list(self.roles)})

    def answers_everything(self) -> bool:
        """Answers in every project there is: a page may show it everything, rendered for answerers."""
        if self.everything:
            return True
        answering = self.answering_ids()
        return not Project.objects.exclude(pk__in=answering).exists()

    def may_anywhere(self, role: str) -> bool:
        return self.everything or any(at_least(held, role) for held in self.roles.values())


NOBODY = Access()
EVERYTHING = Access(everything=True)


def of_user(user: Any) -> Access:
    """A person's access, read once per request (kept on the user object)."""
    if user is None or not user.is_authenticated or not user.is_active:
        return NOBODY
    cached = getattr(user, CACHED, None)
    if isinstance(cached, Access):
        return cached
    if user.is_superuser:
        access = EVERYTHING
    else:
        access = Access(roles=dict(Membership.objects.filter(user=user).values_list("project_id", "role")))
    setattr(user, CACHED, access)
    return access


def forget(user: Any) -> None:
    if user is not None and hasattr(user, CACHED):
        delattr(user, CACHED)


def of_token(token: Any) -> Access:
    """A token sees its project (as an answerer: its scope says what it may do there), or every project."""
    if token is None:
        return NOBODY
    if token.project_id is None:
        return EVERYTHING
    return Access(roles={token.project_id: Role.ANSWERER.value})


def of_request(request: Any) -> Access:
    """The access of whoever made a request: a person logged in, or an API token (request.agent_token)."""
    token = getattr(request, "agent_token", None)
    if token is not None:
        return of_token(token)
    return of_user(getattr(request, "user", None))


def visible_or_404(request: Any, queryset: models.QuerySet[M], through: str = "project", **lookup: Any) -> M:
    """The row `lookup` names, if the request's person (or token) sees its project: else 404, as if there were none."""
    found = of_request(request).visible(queryset, through).filter(**lookup).first()
    if found is None:
        raise Http404("No such thing here.")
    return found


def require(request: Any, project_id: int | None, role: str = Role.ANSWERER) -> None:
    """403 unless the request's person (or token) holds `role` or more in the project."""
    if not of_request(request).may(project_id, role):
        raise PermissionDenied(f"This needs the {role} role in the project; you may only look.")


def answering_project(user: Any) -> Project | None:
    """Where a person's own sample question goes: the default project if they answer there, else their first."""
    access = of_user(user)
    default = Project.default()
    if access.may_answer(default.pk):
        return default
    return Project.objects.filter(pk__in=access.answering_ids()).first()


def projects_with(user: Any, role: str) -> models.QuerySet[Project]:
    """The projects where a person holds `role` or more (every project, for a superuser)."""
    seen = of_user(user)
    if seen.everything:
        return Project.objects.all()
    return Project.objects.filter(pk__in=[pk for pk, held in seen.roles.items() if at_least(held, role)])
