"""Projects, and who may do what in each (issue 31).

Everything an agent produces (its sessions, questions, approvals, lifecycle events and
hook runs) belongs to one project; a person sees the projects they are a member of, with
a role: a viewer sees, an answerer also answers, an admin also manages. Superusers see
and do everything. One project is the default: it catches what names no other.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, TypeVar

from django.conf import settings
from django.core.validators import RegexValidator
from django.db import models, transaction
from django.utils import timezone

DEFAULT_NAME = "default"
NAME_LENGTH = 100


class Role(models.TextChoices):
    VIEWER = "viewer", "Viewer: sees its questions, sessions, approvals and history"
    ANSWERER = "answerer", "Answerer: also answers, dismisses, decides approvals and steers sessions"
    ADMIN = "admin", "Admin: also its tokens, team rules, notification policy and members"


RANKS = {Role.VIEWER.value: 1, Role.ANSWERER.value: 2, Role.ADMIN.value: 3}


def at_least(role: str | None, needed: str) -> bool:
    return role is not None and RANKS.get(role, 0) >= RANKS[needed]


class ProjectQuerySet(models.QuerySet["Project"]):
    def named(self, name: str) -> ProjectQuerySet:
        return self.filter(name__iexact=name.strip())


class Project(models.Model):
    name = models.CharField(
        max_length=NAME_LENGTH,
        unique=True,
        validators=[
            RegexValidator(
                r"^[A-Za-z0-9][A-Za-z0-9._-]*\Z",
                "A project's name is letters, digits, '.', '_' and '-', starting with a letter or digit.",
            )
        ],
        help_text="Also matched against the project an agent names, or its working folder's name.",
    )
    is_default = models.BooleanField(
        default=False, editable=False, help_text="Catches everything that names no other project."
    )
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    members = models.ManyToManyField(settings.AUTH_USER_MODEL, through="Membership", related_name="projects")

    objects = ProjectQuerySet.as_manager()

    class Meta:
        ordering = ["-is_default", "name"]
        constraints = [
            models.UniqueConstraint(fields=["is_default"], condition=models.Q(is_default=True), name="one_default"),
        ]

    def __str__(self) -> str:
        return self.name

    @classmethod
    def default(cls) -> Project:
        project = cls.objects.filter(is_default=True).first()
        if project is not None:
            return project
        # Only a database emptied by hand (or a test's flush) has none: the migration made it.
        with transaction.atomic():
            project, _ = cls.objects.get_or_create(is_default=True, defaults={"name": DEFAULT_NAME})
        return project

    @classmethod
    def for_agent(cls, project_id: int | None, *labels: str) -> int:
        """The project a new row belongs to: its token's, else the first label naming one, else the default.

        `labels`: the project the agent names, its working folder's name.
        """
        if project_id is not None:
            return project_id
        for label in labels:
            if label and label.strip():
                found = cls.objects.named(label).values_list("pk", flat=True).first()
                if found is not None:
                    return found
        return cls.default().pk

    def membership_of(self, user: Any) -> Membership | None:
        return self.memberships.filter(user=user).first()

    def set_member(self, user: Any, role: str) -> Membership:
        if role not in Role.values:
            raise ValueError(f"role: '{role}' is not one of {', '.join(Role.values)}")
        # Atomic: the membership is looked up and changed as one, so two admins at once end with one row.
        with transaction.atomic():
            membership, _ = Membership.objects.update_or_create(project=self, user=user, defaults={"role": role})
        return membership

    def remove_member(self, user: Any) -> bool:
        removed, _ = Membership.objects.filter(project=self, user=user).delete()
        return bool(removed)


W = TypeVar("W", bound="InProject")


class InProjectQuerySet(models.QuerySet[W]):
    def bulk_create(self, objs: Iterable[W], *args: Any, **kwargs: Any) -> list[W]:
        """As save() does: rows given no project land in the default one (bulk_create skips save())."""
        rows = list(objs)
        if any(getattr(row, "project_id", None) is None for row in rows):
            default = Project.default().pk
            for row in rows:
                if getattr(row, "project_id", None) is None:
                    row.project_id = default
        return super().bulk_create(rows, *args, **kwargs)


class InProject(models.Model):
    """A row of an agent's work (a question, a session, an event, a hook run): it belongs to one project.

    Saved without one, it lands in the default project. (Not a field default: that would read the
    database whenever such an object is made, saved or not, and from async code too.)
    """

    project = models.ForeignKey(Project, on_delete=models.PROTECT, related_name="+")

    class Meta:
        abstract = True

    def save(self, *args: Any, **kwargs: Any) -> None:
        # None until given: the field is not null in the database, so its type says int.
        if getattr(self, "project_id", None) is None:
            self.project_id = Project.default().pk
        super().save(*args, **kwargs)


class Membership(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.ANSWERER)
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        ordering = ["project__name", "user__username"]
        constraints = [models.UniqueConstraint(fields=["project", "user"], name="one_role_per_project")]

    def __str__(self) -> str:
        return f"{self.user} in {self.project}: {self.role}"
