"""A question's escalation: its steps written when it is asked, the rest dropped once it ends.

Receivers of the questions' signals (on commit). They never fail an ask or an answer: a problem is logged
and the question goes on; what could not be scheduled is simply not sent.
"""

from __future__ import annotations

import logging
import uuid
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db.models import Q
from django.dispatch import receiver

from notify import email, policy, slack, steps, webhook
from notify.dispatcher import wake
from notify.models import Delivery, NotifyPolicy
from projects.models import Project
from questions import signals
from questions.models import Question

logger = logging.getLogger(__name__)


def project_of(question: Question) -> str:
    return question.session.project_name if question.session_id and question.session else ""


def question_project_name(question: Question) -> str:
    return Project.objects.filter(pk=question.project_id).values_list("name", flat=True).first() or ""


def named_any(names: list[str]) -> Q:
    """Policies named (case aside) as one of `names`; none: no policy."""
    found = Q(pk__in=[])
    for name in names:
        found |= Q(project__iexact=name)
    return found


def steps_for(question: Question) -> list[tuple[policy.Step, str]]:
    """The question's steps that can be sent here, each with where it goes."""
    # The policy named as the agent's session names its project, else the one named for the question's project.
    names = [name for name in (project_of(question), question_project_name(question)) if name]
    found = {policy.project.lower(): policy for policy in NotifyPolicy.objects.filter(named_any(names))}
    own = next((found[name.lower()] for name in names if name.lower() in found), None)
    steps = policy.parse(own.steps if own else settings.HOOKBRIDGE_NOTIFY)
    if webhook.configured() and not any(step.channel == "webhook" for step in steps):
        steps.append(policy.Step("webhook", 0))  # the webhook told of every question, as before policies
    chosen = []
    for step in steps:
        if step.channel == "slack" and slack.configured():
            target = (own.slack_channel if own else "") or settings.HOOKBRIDGE_SLACK_CHANNEL
        elif step.channel == "email" and email.configured():
            target = ",".join(
                address.strip()
                for address in ((own.email_to if own else "") or ",".join(settings.HOOKBRIDGE_EMAIL_TO)).split(",")
                if address.strip()
            )
        elif step.channel == "webhook" and webhook.configured():
            target = settings.HOOKBRIDGE_WEBHOOK_URL
        else:
            continue  # the dashboard is always on; a channel not set up has nobody to reach
        if target:
            chosen.append((step, target))
    return chosen


def due(question: Question, step: policy.Step) -> datetime:
    return question.created_at + timedelta(seconds=step.delay_seconds)


def recipients(own: NotifyPolicy | None) -> str:
    given = (own.email_to if own else "") or ",".join(settings.HOOKBRIDGE_EMAIL_TO)
    return ",".join(address.strip() for address in given.split(",") if address.strip())


def schedule(question: Question) -> list[Delivery]:
    rows = [
        Delivery(question=question, channel=step.channel, target=target, due_at=due(question, step))
        for step, target in steps_for(question)
    ]
    # One row per question and channel (a constraint): a second worker hearing the same ask adds nothing.
    return Delivery.objects.bulk_create(rows, ignore_conflicts=True)


def any_channel() -> bool:
    """Whether this process can reach anyone: without a channel set up, an ask or an answer costs no query here."""
    return slack.configured() or email.configured() or webhook.configured()


@receiver(signals.question_asked)
def question_asked(sender: Any, question: Question, new: bool = True, **kwargs: Any) -> None:
    if not new or not any_channel():
        return
    try:
        if schedule(question):
            wake()
            steps.changed(question.pk)
    except Exception:
        logger.warning("Could not schedule the notifications of question %s", question.pk, exc_info=True)


@receiver(signals.question_resolved)
def question_resolved(sender: Any, question_id: uuid.UUID, **kwargs: Any) -> None:
    # Steps exist only where a channel is set up (schedule writes none otherwise): the answer path stays as it was.
    if not any_channel():
        return
    try:
        Delivery.after_question_ended(question_id)
        wake()
    except Exception:
        logger.warning("Could not update the notifications of question %s", question_id, exc_info=True)
