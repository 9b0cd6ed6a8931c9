"""Projects, and who may do what in each (issue 31).

Everything an agent produces (its sessions, questions, approvals, lifecycle events and
hook runs) belongs to one project; a person sees the projects they are a member of, with
a role: a viewer sees, an answerer also answers, an admin also manages. Superusers see
and do everything. One project is the default: it catches what names no other.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date, datetime, time, timedelta
from typing import Any, TypeVar
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator, RegexValidator
from django.db import models, transaction
from django.utils import timezone

from audit.audited import Audited

DEFAULT_NAME = "default"
NAME_LENGTH = 100


class Role(models.TextChoices):
    VIEWER = "viewer", "Viewer: sees its questions, sessions, approvals and history"
    ANSWERER = "answerer", "Answerer: also answers, dismisses, decides approvals and steers sessions"
    ADMIN = "admin", "Admin: also its tokens, team rules, notification policy and members"


RANKS = {Role.VIEWER.value: 1, Role.ANSWERER.value: 2, Role.ADMIN.value: 3}


# Set on a new person the company's directory makes: they join no project by default (projects.signals), their
# groups say where they belong (identity.roles).
JOINS_BY_DIRECTORY = "_hookbridge_from_directory"


class MembershipSource(models.TextChoices):
    BY_HAND = "", "by hand"
    DIRECTORY = "directory", "from the identity provider's groups"


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

    def set_member(self, user: Any, role: str, source: str = MembershipSource.BY_HAND) -> Membership:
        if role not in Role.values:
            raise ValueError(f"role: '{role}' is not one of {', '.join(Role.values)}")
        # Atomic: the membership is looked up and changed as one, so two admins at once end with one row.
        with transaction.atomic():
            membership, _ = Membership.objects.update_or_create(
                project=self, user=user, defaults={"role": role, "source": source}
            )
        return membership

    def remove_member(self, user: Any) -> bool:
        # One by one, through the model: each removal is recorded (audit).
        removed = 0
        for membership in Membership.objects.filter(project=self, user=user):
            membership.delete()
            removed += 1
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


class Membership(Audited):
    audit_noun = "member"
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.ANSWERER)
    # Who gave the role: an admin by hand, or the company's directory through a group (identity.roles). A
    # sign-in or SCIM change rewrites only the directory's rows: a role given by hand stays (unless ROLES_ONLY).
    source = models.CharField(max_length=16, choices=MembershipSource.choices, default=MembershipSource.BY_HAND)
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        ordering = ["project__name", "user__username"]
        constraints = [models.UniqueConstraint(fields=["project", "user"], name="one_role_per_project")]

    def __str__(self) -> str:
        return f"{self.user} in {self.project}: {self.role}"

    def audit_action(self, verb: str, changes: dict[str, Any]) -> str:
        return {"created": "member.added", "deleted": "member.removed"}.get(verb) or (
            "member.role_changed" if "role" in changes.get("changes", {}) else "member.changed"
        )

    def audit_target(self) -> str:
        return f"member {self.user.get_username()} of {self.project.name}"


def _time_zone(name: str) -> None:
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValidationError(f"{name!r} is not a time zone (Europe/Berlin, America/New_York, UTC)") from None


class OnCallSchedule(Audited):
    """A rotation of a project's people: who is on call now, for a policy's `on-call:NAME` (issue 53).

    Each shift starts at the hand-off time in the schedule's time zone and lasts `rotation_days`; the people
    take turns in order from `starts_on`. An override gives one shift (the one starting that day) to someone
    else: a sick day, a swap. Nobody is on call in a schedule without people.
    """

    audit_noun = "on_call_schedule"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="on_call_schedules")
    name = models.CharField(
        max_length=NAME_LENGTH,
        validators=[RegexValidator(r"^[A-Za-z0-9][A-Za-z0-9._-]*\Z", "letters, digits, '.', '_' and '-'")],
        help_text="What a policy names: on-call:NAME.",
    )
    handoff = models.TimeField(default=time(9, 0), help_text="When one shift hands to the next, local time.")
    time_zone = models.CharField(max_length=64, default="UTC", validators=[_time_zone])
    rotation_days = models.PositiveSmallIntegerField(
        default=7, validators=[MinValueValidator(1), MaxValueValidator(366)], help_text="How long each shift lasts."
    )
    starts_on = models.DateField(
        default=date(2026, 1, 5),  # a Monday: weekly shifts hand off on Mondays unless told otherwise
        help_text="The first person's first shift starts on this day, at the hand-off time.",
    )
    source = models.CharField(max_length=300, blank=True, default="admin", help_text="Where it came from.")

    class Meta:
        ordering = ["project__name", "name"]
        verbose_name = "on-call schedule"
        constraints = [models.UniqueConstraint(fields=["project", "name"], name="one_schedule_name_per_project")]

    def __str__(self) -> str:
        return f"on-call:{self.name} ({self.project})"

    def zone(self) -> ZoneInfo:
        return ZoneInfo(self.time_zone)

    def shift_day(self, at: datetime | None = None) -> date:
        """The local day on which the shift covering `at` started (before the hand-off: the day before's)."""
        local = (at or timezone.now()).astimezone(self.zone())
        return local.date() if local.time() >= self.handoff else local.date() - timedelta(days=1)

    def rota(self) -> list[Any]:
        return [turn.user for turn in self.turns.select_related("user").order_by("position", "pk")]

    def _whose(self, day: date, people: list[Any], overrides: dict[date, Any]) -> Any:
        if day in overrides:
            return overrides[day]
        if not people:
            return None
        return people[((day - self.starts_on).days // self.rotation_days) % len(people)]

    def _overrides(self, first: date, last: date) -> dict[date, Any]:
        found = self.overrides.filter(day__gte=first, day__lte=last).select_related("user")
        return {override.day: override.user for override in found}

    def on_call(self, at: datetime | None = None) -> Any:
        """The person on call at `at` (now): the shift's override, else whose turn it is; None with nobody."""
        day = self.shift_day(at)
        return self._whose(day, self.rota(), self._overrides(day, day))

    def next_handoffs(self, count: int = 3, at: datetime | None = None) -> list[tuple[datetime, Any]]:
        """The next `count` hand-offs after `at` (now): when, and to whom (overrides included)."""
        today = self.shift_day(at)
        horizon = today + timedelta(days=self.rotation_days * (count + 1) + 62)
        people, overrides = self.rota(), self._overrides(today, horizon)
        found: list[tuple[datetime, Any]] = []
        day, who = today, self._whose(today, people, overrides)
        while len(found) < count and day < horizon:
            day += timedelta(days=1)
            after = self._whose(day, people, overrides)
            if after != who:
                found.append((datetime.combine(day, self.handoff, self.zone()), after))
            who = after
        return found


class OnCallTurn(Audited):
    """One person's place in a schedule's rotation."""

    audit_noun = "on_call_turn"

    schedule = models.ForeignKey(OnCallSchedule, on_delete=models.CASCADE, related_name="turns")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    position = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["schedule", "position", "pk"]

    def __str__(self) -> str:
        return f"{self.position + 1}. {self.user}"

    def _audit_project(self) -> Any:
        return self.schedule.project


class OnCallOverride(Audited):
    """One shift given to someone else: the shift that starts on `day` at the schedule's hand-off time."""

    audit_noun = "on_call_override"

    schedule = models.ForeignKey(OnCallSchedule, on_delete=models.CASCADE, related_name="overrides")
    day = models.DateField(help_text="The shift starting on this day at the hand-off time.")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    reason = models.CharField(max_length=300, blank=True)

    class Meta:
        ordering = ["schedule", "day"]
        constraints = [models.UniqueConstraint(fields=["schedule", "day"], name="one_override_per_shift")]

    def __str__(self) -> str:
        return f"{self.day}: {self.user}"

    def _audit_project(self) -> Any:
        return self.schedule.project


def admin_addresses(project_id: int) -> list[str]:
    """The e-mail addresses of a project's active admins, sorted (a policy's `notify: admins`, the weekly rule
    suggestions): one query, by the project's id."""
    people = Membership.objects.filter(project_id=project_id, role=Role.ADMIN, user__is_active=True)
    return sorted({membership.user.email for membership in people.select_related("user") if membership.user.email})


ON_CALL = "on-call:"


def on_call_name(text: str) -> str | None:
    """The schedule a policy's `on-call:NAME` (a decider, an escalate step) names; None for anything else."""
    return text[len(ON_CALL) :] if text.startswith(ON_CALL) else None


def on_call_now(project_id: int, name: str, at: datetime | None = None) -> Any:
    """The person on call in the project's schedule `name` (a policy's `on-call:NAME`); None: no such schedule,
    or nobody in it."""
    schedule = OnCallSchedule.objects.filter(project_id=project_id, name__iexact=name).first()
    return schedule.on_call(at) if schedule is not None else None
