"""A question served as an MCP task (mcpapi.tasks): the handle a client polls, and whose it is."""

from __future__ import annotations

import secrets
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import models, transaction
from django.utils import timezone

from questions.models import STOPPED_ASKING_AFTER, Question, Status
from tokens.models import AgentToken


def new_task_id() -> str:
    # Unguessable: the id is all a client shows to read the outcome (with its own token).
    return secrets.token_urlsafe(24)


class AskTask(models.Model):
    id = models.CharField(primary_key=True, max_length=64, default=new_task_id, editable=False)
    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="tasks")
    # Whose task it is: only this token reads or cancels it (None: the local stdio client, which has none).
    token = models.ForeignKey(AgentToken, null=True, blank=True, on_delete=models.CASCADE, related_name="tasks")
    tool = models.CharField(max_length=64, help_text="The tool the agent called, whose result the task carries.")
    created_at = models.DateTimeField(default=timezone.now)
    cancelled_at = models.DateTimeField(null=True, blank=True)
    # HOOKBRIDGE_ANSWER_IN_CLIENT: the question is also offered in the agent's own client, as a form, until
    # someone answers anywhere or the person there declines it (then the team answers as ever).
    offered_to_client = models.BooleanField(default=False)
    declined_in_client_at = models.DateTimeField(null=True, blank=True)
    client = models.CharField(max_length=100, blank=True, help_text="The client that asked, as it names itself.")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["question", "token", "tool"], name="one_task_per_ask")]

    def __str__(self) -> str:
        return f"task {self.id[:8]}… for {self.question_id}"

    @classmethod
    def open(
        cls, question: Question, token_id: int | None, tool: str, *, offered_to_client: bool = False, client: str = ""
    ) -> AskTask:
        """The task for this ask: the one made before when the same agent asks the same question again."""
        made = {"offered_to_client": offered_to_client, "client": client[:100]}
        # Atomic so two identical asks at once make one task, not an IntegrityError for the second.
        with transaction.atomic():
            task, _ = cls.objects.get_or_create(question=question, token_id=token_id, tool=tool, defaults=made)
        return task

    @property
    def input_wanted(self) -> bool:
        """Whether the question is now offered in the agent's client (its kind has a form for it)."""
        return (
            self.offered_to_client
            and self.declined_in_client_at is None
            and self.question.status == Status.PENDING
            and self.question.kind_spec.elicitation(self.question) is not None
        )

    def decline_in_client(self) -> None:
        # Atomic: the task stops offering the form and the card stops saying so, together.
        with transaction.atomic():
            AskTask.objects.filter(pk=self.pk, declined_in_client_at__isnull=True).update(
                declined_in_client_at=timezone.now()
            )
            self.question.no_longer_in_client()

    @classmethod
    def owned(cls, task_id: str, token_id: int | None) -> AskTask | None:
        """The task, with its question and answer, if `token_id` made it; None for another's or a made-up id."""
        found = cls.objects.select_related("question", "question__answer", "token")
        found = found.filter(pk=task_id, token_id=token_id)
        return found.first()

    def ttl_ms(self) -> int:
        """How long the task is kept from its creation: always a number (issue 55: a null ttlMs let a task live on
        after its client was gone).

        A question with a deadline: past it by the re-attach window. One without: while the agent keeps polling,
        past its last poll by STOPPED_ASKING_AFTER and the re-attach window (when an unpolled question leaves the
        queue); once it has ended, past its end by the re-attach window (time to read the outcome).
        """
        question = self.question
        window = timedelta(seconds=settings.HOOKBRIDGE_REATTACH_WINDOW)
        deadline: datetime | None = question.deadline
        if deadline is not None:
            ends = deadline
        elif question.resolved_at is not None:
            ends = question.resolved_at
        else:
            ends = max(question.agent_polled_at or self.created_at, self.created_at) + STOPPED_ASKING_AFTER
        kept = ends + window - self.created_at
        return max(0, int(kept.total_seconds() * 1000))

    def kept_until(self) -> datetime:
        """When the task's time to live ends: tasks/get refuses it after."""
        return self.created_at + timedelta(milliseconds=self.ttl_ms())

    def cancel(self) -> bool:
        """The agent withdrew the question: it leaves every dashboard. False when it was already resolved."""
        withdrawn = self.question.abort("the agent cancelled its task")
        AskTask.objects.filter(pk=self.pk, cancelled_at__isnull=True).update(cancelled_at=timezone.now())
        return withdrawn

    def last_updated_at(self) -> Any:
        return self.question.resolved_at or self.created_at
