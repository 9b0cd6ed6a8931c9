"""Lifecycle events agents report (which phase, plan, task or verification they are in) and agent sessions.

Changes are announced with lifecycle.signals on commit; lifecycle.live pushes them to pages."""

from __future__ import annotations

import uuid
from collections.abc import Collection
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, models, transaction
from django.utils import timezone

from core.signals import send_on_commit
from lifecycle import signals
from projects.models import InProject, InProjectQuerySet, Project
from tokens.models import AgentToken, Scope

# How long an agent that reported nothing new still has its row in the status bar.
STATUS_WINDOW = timedelta(hours=1)


class EventType(models.TextChoices):
    PHASE_STARTED = "phase-started", "Phase started"
    PHASE_COMPLETED = "phase-completed", "Phase completed"
    PLAN_STARTED = "plan-started", "Plan started"
    PLAN_COMPLETED = "plan-completed", "Plan completed"
    TASK_STARTED = "task-started", "Task started"
    TASK_COMPLETED = "task-completed", "Task completed"
    VERIFICATION_STARTED = "verification-started", "Verification started"
    VERIFICATION_COMPLETED = "verification-completed", "Verification completed"


class LifecycleEvent(InProject):
    event_type = models.CharField(max_length=32, choices=EventType.choices)
    phase_name = models.CharField(max_length=200, blank=True)
    phase_number = models.CharField(max_length=32, blank=True)
    step = models.PositiveIntegerField(null=True, blank=True)
    total_steps = models.PositiveIntegerField(null=True, blank=True)
    asker = models.ForeignKey(AgentToken, null=True, blank=True, on_delete=models.SET_NULL)
    asker_name = models.CharField(max_length=100)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    session = models.ForeignKey(
        "lifecycle.AgentSession", null=True, blank=True, on_delete=models.SET_NULL, related_name="lifecycle_events"
    )

    objects = InProjectQuerySet["LifecycleEvent"].as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.get_event_type_display()} {self.phase_name}".strip()

    @classmethod
    def latest(cls, **mine: object) -> LifecycleEvent | None:
        """The newest event, of the agent that `mine` names (asker_id=..., asker_name=...) when given."""
        return cls.objects.filter(**mine).order_by("-created_at", "-id").first()

    @classmethod
    def latest_per_agent(
        cls, *, within: timedelta = STATUS_WINDOW, limit: int = 12, projects: Collection[int] | None = None
    ) -> list[LifecycleEvent]:
        """The newest event of each agent at work: per open session, or per agent where it opened none.

        For the status bar: one row per agent, not the newest event from anyone. Agents silent for
        longer than `within`, and finished sessions, drop out; with nobody at work, the newest event.
        `projects`: only theirs (None: every project's).
        """
        mine = cls.objects.all() if projects is None else cls.objects.filter(project_id__in=list(projects))
        # Only ids and keys are read, and finished sessions left out by the database: the bar is
        # rendered up to 20 times a second while agents report flat out, on the thread their own
        # calls wait on, and 500 events built as models (with their sessions) took most of a
        # worker's time (bench: lifecycle events per second).
        recent = (
            mine.filter(created_at__gte=timezone.now() - within)
            .filter(models.Q(session__isnull=True) | models.Q(session__completed_at=None, session__closed_at=None))
            .order_by("-created_at", "-id")
            .values_list("id", "session_id", "asker_id", "asker_name")[:500]
        )
        newest_ids: list[int] = []
        seen: set[object] = set()
        for event_id, session_id, asker_id, asker_name in recent:
            key = session_id or ("agent", asker_id, asker_name)
            if key not in seen:
                seen.add(key)
                newest_ids.append(event_id)
                if len(newest_ids) == limit:
                    break
        chosen = cls.objects.filter(id__in=newest_ids).select_related("session").order_by("-created_at", "-id")
        rows: list[LifecycleEvent] = list(chosen)
        if not rows and (newest := mine.order_by("-created_at", "-id").first()) is not None:
            rows.append(newest)
        return rows[:limit]

    @classmethod
    def record(cls, *, asker: AgentToken | None, asker_name: str, **fields: object) -> LifecycleEvent:
        return cls.record_many([(asker, asker_name, fields)])[0]

    @classmethod
    def record_many(cls, reports: list[tuple[AgentToken | None, str, dict[str, object]]]) -> list[LifecycleEvent]:
        """Events reported at about the same moment (lifecycle.reporting), written together, in order."""
        # Atomic so the dashboard pushes are sent only once the rows are visible to
        # the pages that re-read them on reconnect.
        with transaction.atomic():
            # Each agent's open session, once per batch and by its key alone: the events need no more of it.
            session_of: dict[object, tuple[uuid.UUID | None, int]] = {}
            for asker, _, _ in reports:
                if asker is not None and asker.pk not in session_of:
                    found = AgentSession.objects.current_of(asker.pk).values_list("pk", "project_id").first()
                    # An event belongs to its session's project, else to its token's (or the default).
                    session_of[asker.pk] = found or (None, Project.for_agent(asker.project_id))
            default_id = Project.default().pk if any(asker is None for asker, _, _ in reports) else 0
            events: list[LifecycleEvent] = LifecycleEvent.objects.bulk_create(
                [
                    LifecycleEvent(
                        asker=asker,
                        asker_name=asker_name,
                        session_id=session_of[asker.pk][0] if asker is not None else None,
                        project_id=session_of[asker.pk][1] if asker is not None else default_id,
                        **fields,
                    )
                    for asker, asker_name, fields in reports
                ]
            )
            for event in events:
                send_on_commit(signals.event_recorded, LifecycleEvent, event=event)
        return events

    @property
    def progress_percent(self) -> int | None:
        if self.step is None or not self.total_steps:
            return None
        return max(0, min(100, round(100 * self.step / self.total_steps)))

    def as_submitted(self) -> dict[str, object]:
        """The event under the names it was submitted with (MAXSIM's get_phase_status), plus who and when.

        Fields the agent left out are left out here too, as the original does.
        """
        submitted: dict[str, object] = {
            "event_type": self.event_type,
            "phase_name": self.phase_name or None,
            "phase_number": self.phase_number or None,
            "step": self.step,
            "total_steps": self.total_steps,
        }
        return {
            **{key: value for key, value in submitted.items() if value is not None},
            "sent_by": self.asker_name,
            "created_at": self.created_at.isoformat(),
        }


class Phase(models.TextChoices):
    ANALYZING = "analyzing", "Analyzing"
    PLANNING = "planning", "Planning"
    IMPLEMENTING = "implementing", "Implementing"
    DEPLOYING = "deploying", "Deploying"
    VERIFYING = "verifying", "Verifying"


class SessionEventType(models.TextChoices):
    ACK = "ack", "Acknowledged"
    PROGRESS = "progress", "Progress"
    STATUS = "status", "Status"
    RESPONSE = "response", "Response"
    COMPLETE = "complete", "Complete"
    ERROR = "error", "Error"
    # What an agent host reports through its own hooks (hosts), with no tool call.
    PROMPT = "prompt", "Prompt submitted"
    TOOL = "tool", "Tool use"
    APPROVAL = "approval", "Approval"
    STOP = "stop", "Stopped"
    END = "end", "Session ended"
    MESSAGE = "message", "Message delivered"
    HOOK = "hook", "Other hook event"


# What an agent host reports through its hooks, as opposed to the progress tools' events.
HOST_EVENT_TYPES = [
    SessionEventType.PROMPT, SessionEventType.TOOL, SessionEventType.APPROVAL, SessionEventType.STOP,
    SessionEventType.END, SessionEventType.MESSAGE, SessionEventType.HOOK,
]  # fmt: skip


class SessionTaken(Exception):
    """A client-chosen guid that another token's session already has."""


class SessionClosed(Exception):
    """The session is closed (or was never this token's): nothing more can be recorded on it."""


# Sessions the overview lists; older ones are in the admin.
OVERVIEW_ROWS = 200


class AgentSessionQuerySet(InProjectQuerySet["AgentSession"]):
    def active(self) -> AgentSessionQuerySet:
        return self.filter(closed_at__isnull=True, completed_at__isnull=True)

    def current_of(self, token_id: int) -> AgentSessionQuerySet:
        """A token's open sessions, newest first: its questions and events go to the first."""
        return self.active().filter(token_id=token_id).order_by("-created_at")

    def for_overview(self, project: str = "", projects: Collection[int] | None = None) -> AgentSessionQuerySet:
        """The overview's rows: the newest OVERVIEW_ROWS sessions (named for one project, if given), newest first.

        `projects`: of those projects only (None: every project's).

        What state() needs is counted in the same query (no query per row).
        """
        mine = self if projects is None else self.filter(project_id__in=list(projects))
        sessions = mine.annotate(
            pending_questions=models.Count("questions", filter=models.Q(questions__status="pending"))
        ).order_by("-created_at")
        return (sessions.filter(project_name=project) if project else sessions)[:OVERVIEW_ROWS]


class AgentSession(InProject):
    """One agent run: created before the agent starts, reported on while it works."""

    guid = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    name = models.CharField(max_length=200, blank=True)
    # The project the agent names (a label; the working folder's name for a host's session).
    project_name = models.CharField(max_length=200, blank=True, db_index=True)
    token = models.ForeignKey(AgentToken, null=True, blank=True, on_delete=models.SET_NULL)
    owner_name = models.CharField(max_length=100)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    last_activity_at = models.DateTimeField(default=timezone.now)
    closed_at = models.DateTimeField(null=True, blank=True)
    # The current state, kept up to date as events arrive (the events are the history).
    acked_at = models.DateTimeField(null=True, blank=True)
    progress = models.PositiveSmallIntegerField(null=True, blank=True)
    status_message = models.TextField(blank=True)
    phase = models.CharField(max_length=16, choices=Phase.choices, blank=True)
    response = models.TextField(blank=True)
    completed_at = models.DateTimeField(null=True, blank=True)
    success = models.BooleanField(null=True, blank=True)
    last_error = models.TextField(blank=True)
    error_recoverable = models.BooleanField(null=True, blank=True)
    # The agent host reporting through its own hooks ("claude-code"); empty for the progress tools.
    host = models.CharField(max_length=32, blank=True)

    objects = AgentSessionQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return self.name or f"Session {self.guid}"

    def get_absolute_url(self) -> str:
        return f"/sessions/{self.guid}/"

    @property
    def group_name(self) -> str:
        return f"session.{self.guid.hex}"

    @classmethod
    def hosts_at_work(
        cls, *, within: timedelta = STATUS_WINDOW, limit: int = 12, projects: Collection[int] | None = None
    ) -> list[AgentSession]:
        """Sessions an agent host reports on through its hooks, active lately: the status bar's other rows."""
        mine = cls.objects.all() if projects is None else cls.objects.filter(project_id__in=list(projects))
        recent = mine.active().exclude(host="").filter(last_activity_at__gte=timezone.now() - within)
        return list(recent.order_by("-last_activity_at")[:limit])

    @classmethod
    def active_for(cls, token: AgentToken | None) -> AgentSession | None:
        """The session a token's questions and lifecycle events belong to right now, if any."""
        if token is None:
            return None
        return cls.objects.current_of(token.pk).first()

    @classmethod
    def open(cls, *, token: AgentToken, name: str = "", project: str = "") -> AgentSession:
        # Atomic so the overview is told only once the row can be read.
        with transaction.atomic():
            session = cls.objects.create(
                token=token,
                owner_name=token.name,
                name=name.strip(),
                project_name=project.strip(),
                project_id=Project.for_agent(token.project_id, project),
            )
            send_on_commit(signals.session_changed, AgentSession, guid=session.guid, change="opened")
        return session

    @classmethod
    def open_as(
        cls, guid: uuid.UUID, *, token: AgentToken, name: str = "", project: str = "", host: str = ""
    ) -> tuple[AgentSession, bool]:
        """The session with a client-chosen guid: (created now, True), or (this token's earlier one, False).

        Raises SessionTaken when another token's session has that guid.
        """
        # Atomic so the overview is told only once the row can be read. Two calls choosing
        # one guid at once: one inserts, the other's insert fails and it reads the winner.
        with transaction.atomic():
            existing = cls.objects.filter(pk=guid).first()
            if existing is None:
                try:
                    with transaction.atomic():
                        session = cls.objects.create(
                            guid=guid,
                            token=token,
                            owner_name=token.name,
                            name=name.strip(),
                            project_name=project.strip(),
                            project_id=Project.for_agent(token.project_id, project),
                            host=host,
                        )
                except IntegrityError:
                    existing = cls.objects.get(pk=guid)
                else:
                    send_on_commit(signals.session_changed, AgentSession, guid=session.guid, change="opened")
                    return session, True
        if existing.token_id != token.pk:
            raise SessionTaken(f"session {guid} was opened by another token")
        return existing, False

    def readable_by(self, token: AgentToken) -> bool:
        """The token that opened it, or an answering token of its project or of every project (a team's bot)."""
        in_project = token.project_id is None or token.project_id == self.project_id
        return (token.scope == Scope.ANSWER and in_project) or self.token_id == token.pk

    def state(self) -> str:
        """What the overview says: closed, completed, failed, waiting for a human, idle or working."""
        if self.completed_at is not None:
            return "completed" if self.success else "failed"
        if self.last_error and not self.error_recoverable:
            return "failed"
        if self.closed_at is not None:
            return "closed"
        pending = getattr(self, "pending_questions", None)
        if pending is None:
            pending = self.questions.filter(status="pending").count()
        if pending:
            return "waiting for a human"
        idle = (timezone.now() - self.last_activity_at).total_seconds()
        if idle >= settings.HOOKBRIDGE_IDLE_AFTER:
            return f"idle for {int(idle // 60)} minutes"
        return "working"

    @property
    def finished(self) -> bool:
        """Completed, closed, or failed for good: what state() reports as over, without counting questions."""
        unrecoverable = bool(self.last_error) and not self.error_recoverable
        return self.completed_at is not None or self.closed_at is not None or unrecoverable

    def headline(self) -> tuple[str, str]:
        """(tone, sentence): the one thing the session page says first; the final state wins over anything earlier."""
        if self.completed_at is not None:
            at = timezone.localtime(self.completed_at).strftime("%H:%M:%S")
            if self.success:
                return "ok", f"Completed successfully at {at}."
            return "fail", f"Completed without success at {at}."
        if self.last_error and not self.error_recoverable:
            return "fail", f"Failed: {self.last_error}"
        if self.closed_at is not None:
            return "", f"Closed at {timezone.localtime(self.closed_at).strftime('%Y-%m-%d %H:%M:%S')}."
        return "", ""

    def host_activity(self, limit: int = 200) -> list[SessionEvent]:
        """What the host reported through its hooks (prompts, tool uses, approvals, stops), newest first."""
        recent = self.events.filter(type__in=HOST_EVENT_TYPES).order_by("-created_at", "-id")
        return list(recent[:limit])

    def error_history(self) -> list[SessionEvent]:
        """Every error the agent reported, oldest first (the headline may repeat the last one)."""
        return list(self.events.filter(type=SessionEventType.ERROR).order_by("created_at", "id"))

    @property
    def takes_messages(self) -> bool:
        """Whether a person can message its agent: only a host with hooks picks messages up."""
        return bool(self.host) and not self.finished

    def record(self, event_type: SessionEventType | str, *, activity: str | None = None, **data: Any) -> SessionEvent:
        """Store one event and fold it into the session's state; pushed to every watcher on commit.

        `activity`: what the agent is doing now, in a few words ("running Bash: npm test"),
        shown as the session's status (hook events carry no status of their own).
        """
        # Atomic and locked so two events for one session fold in one after the other,
        # and a session closed meanwhile refuses the event instead of storing it.
        with transaction.atomic():
            session = AgentSession.objects.select_for_update().get(pk=self.pk)
            if session.closed_at is not None:
                raise SessionClosed(f"session {self.guid} is closed")
            now = timezone.now()
            event_type = SessionEventType(event_type)
            event = SessionEvent.objects.create(session=session, type=event_type, data=data, created_at=now)
            changes: dict[str, Any] = {"last_activity_at": now}
            if event_type == SessionEventType.ACK:
                changes["acked_at"] = now
            elif event_type == SessionEventType.PROGRESS:
                changes["progress"] = data["percent"]
            elif event_type == SessionEventType.STATUS:
                changes.update(status_message=data["message"], phase=data.get("phase", ""))
            elif event_type == SessionEventType.RESPONSE:
                changes["response"] = data["content"]
            elif event_type == SessionEventType.COMPLETE:
                changes.update(completed_at=now, success=data["success"])
            elif event_type == SessionEventType.ERROR:
                changes.update(last_error=data["error"], error_recoverable=data["recoverable"])
            if activity is not None:
                changes.update(status_message=activity, phase="")
            AgentSession.objects.filter(pk=self.pk).update(**changes)
            for name, value in changes.items():
                setattr(self, name, value)
            send_on_commit(signals.session_event_recorded, SessionEvent, event_id=event.pk)
        return event

    def reopen(self) -> bool:
        """A closed session whose host carries on (Claude Code resumes a session under its old id)."""
        with transaction.atomic():
            reopened = AgentSession.objects.filter(pk=self.pk, closed_at__isnull=False).update(closed_at=None)
            if reopened:
                send_on_commit(signals.session_changed, AgentSession, guid=self.pk, change="opened")
        self.closed_at = None
        return bool(reopened)

    def close(self) -> None:
        with transaction.atomic():
            closed = AgentSession.objects.filter(pk=self.pk, closed_at__isnull=True).update(closed_at=timezone.now())
            if closed:
                send_on_commit(signals.session_changed, AgentSession, guid=self.pk, change="closed")
        self.refresh_from_db()

    def as_dict(self) -> dict[str, Any]:
        def iso(value: Any) -> str | None:
            return value.isoformat() if value else None

        return {
            "guid": str(self.guid),
            "name": self.name,
            "project": self.project_name,
            "owner": self.owner_name,
            "state": self.state(),
            "ackedAt": iso(self.acked_at),
            "progress": self.progress,
            "status": {"message": self.status_message, "phase": self.phase or None} if self.status_message else None,
            "response": self.response or None,
            "completion": {"success": self.success, "completedAt": iso(self.completed_at)}
            if self.completed_at
            else None,
            "error": {"error": self.last_error, "recoverable": self.error_recoverable} if self.last_error else None,
            "errors": [
                {"error": e.data["error"], "recoverable": e.data["recoverable"], "timestamp": iso(e.created_at)}
                for e in self.events.filter(type=SessionEventType.ERROR).order_by("created_at", "id")
            ],
            "createdAt": iso(self.created_at),
            "lastActivityAt": iso(self.last_activity_at),
            "closedAt": iso(self.closed_at),
        }


class SessionEvent(models.Model):
    session = models.ForeignKey(AgentSession, on_delete=models.CASCADE, related_name="events")
    type = models.CharField(max_length=16, choices=SessionEventType.choices)
    data = models.JSONField(default=dict)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [models.Index(fields=["session", "type", "created_at"])]

    def __str__(self) -> str:
        return f"{self.type} {self.data}"

    def message(self) -> dict[str, Any]:
        """The event as programs get it on /ws/sessions/<guid>/."""
        return {"type": self.type, "guid": str(self.session_id), **self.data, "timestamp": self.created_at.isoformat()}


class SessionMessage(models.Model):
    """A person's message to the agent of a session, handed over at the host's next hook call."""

    session = models.ForeignKey(AgentSession, on_delete=models.CASCADE, related_name="messages")
    text = models.TextField()
    sent_by = models.CharField(max_length=150)
    created_at = models.DateTimeField(default=timezone.now)
    delivered_at = models.DateTimeField(null=True, blank=True)
    # The hook that carried it (PostToolUse, Stop).
    delivered_via = models.CharField(max_length=32, blank=True)

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [models.Index(fields=["session", "delivered_at"])]

    def __str__(self) -> str:
        return f"{self.sent_by}: {self.text[:60]}"

    @classmethod
    def send(cls, session: AgentSession, text: str, *, by: str) -> SessionMessage:
        # Atomic so the session page is told only once the message can be read.
        with transaction.atomic():
            message = cls.objects.create(session=session, text=text, sent_by=by[:150])
            send_on_commit(signals.session_changed, AgentSession, guid=session.pk, change="message")
        return message

    @staticmethod
    def take_undelivered(session: AgentSession, via: str) -> list[SessionMessage]:
        """The messages not yet handed over, now marked as handed over by `via`.

        Each is claimed with a conditional UPDATE: two hook calls at once never both carry one.
        """
        taken: list[SessionMessage] = []
        for message in SessionMessage.objects.filter(session=session, delivered_at__isnull=True):
            now = timezone.now()
            won = SessionMessage.objects.filter(pk=message.pk, delivered_at__isnull=True).update(
                delivered_at=now, delivered_via=via
            )
            if won:
                message.delivered_at, message.delivered_via = now, via
                taken.append(message)
        if taken:
            send_on_commit(signals.session_changed, AgentSession, guid=session.pk, change="message")
        return taken
