"""Lifecycle events agents report: which phase, plan, task or verification they are in."""

from __future__ import annotations

from django.db import models, transaction
from django.utils import timezone

from mcpapi.models import AgentToken


class EventType(models.TextChoices):
    PHASE_STARTED = "phase-started", "Phase started"
    PHASE_COMPLETED = "phase-completed", "Phase completed"
    PLAN_STARTED = "plan-started", "Plan started"
    PLAN_COMPLETED = "plan-completed", "Plan completed"
    TASK_STARTED = "task-started", "Task started"
    TASK_COMPLETED = "task-completed", "Task completed"
    VERIFICATION_STARTED = "verification-started", "Verification started"
    VERIFICATION_COMPLETED = "verification-completed", "Verification completed"


class LifecycleEvent(models.Model):
    event_type = models.CharField(max_length=32, choices=EventType.choices)
    phase_name = models.CharField(max_length=200, blank=True)
    phase_number = models.CharField(max_length=32, blank=True)
    step = models.PositiveIntegerField(null=True, blank=True)
    total_steps = models.PositiveIntegerField(null=True, blank=True)
    asker = models.ForeignKey(AgentToken, null=True, blank=True, on_delete=models.SET_NULL)
    asker_name = models.CharField(max_length=100)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.get_event_type_display()} {self.phase_name}".strip()

    @classmethod
    def latest(cls) -> LifecycleEvent | None:
        return cls.objects.order_by("-created_at", "-id").first()

    @classmethod
    def record(cls, *, asker: AgentToken | None, asker_name: str, **fields: object) -> LifecycleEvent:
        from lifecycle import live

        # Atomic so the dashboard push is sent only once the row is visible to
        # the pages that re-read it on reconnect.
        with transaction.atomic():
            event = cls.objects.create(asker=asker, asker_name=asker_name, **fields)
            transaction.on_commit(lambda: live.event_recorded(event.pk), robust=True)
        return event

    @property
    def progress_percent(self) -> int | None:
        if self.step is None or not self.total_steps:
            return None
        return max(0, min(100, round(100 * self.step / self.total_steps)))

    def as_dict(self) -> dict[str, object]:
        return {
            "eventType": self.event_type,
            "phaseName": self.phase_name or None,
            "phaseNumber": self.phase_number or None,
            "step": self.step,
            "totalSteps": self.total_steps,
            "asker": self.asker_name,
            "createdAt": self.created_at.isoformat(),
        }
