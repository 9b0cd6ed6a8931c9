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
from django.dispatch import receiver
from django.utils.html import escape

from core.signals import person_deactivated
from notify import discord, email, policy, push, slack, steps, teams, telegram, webhook
from notify.dispatcher import wake
from notify.models import Delivery, NotifyPolicy, PushSubscription
from projects.models import admin_addresses, on_call_name, on_call_now
from questions import signals
from questions.models import Question

logger = logging.getLogger(__name__)


def policy_of(question: Question) -> NotifyPolicy | None:
    """The question's project's own policy, if it has one that is on.

    Only the project the question belongs to (its token's, decided once at the ask) chooses: the project
    label an agent gives its session is free text and routes nothing (issue 37).
    """
    return NotifyPolicy.objects.filter(project_id=question.project_id, enabled=True).first()


def steps_for(question: Question) -> list[tuple[policy.Step, str]]:
    """The question's steps that can be sent here, each with where it goes."""
    own = policy_of(question)
    steps = policy.parse(own.steps if own else settings.HOOKBRIDGE_NOTIFY)
    escalate = question.requirement.get("escalate") if question.requirement else None
    if escalate:
        # The approval's policy says whom to reach, and when (approvals.policies): its steps replace the project's.
        steps = [policy.Step(str(step["notify"]), int(step["after"])) for step in escalate]
    if webhook.configured() and not any(step.channel == "webhook" for step in steps):
        steps.append(policy.Step("webhook", 0))  # the webhook told of every question, as before policies
    chosen: list[tuple[policy.Step, str]] = []
    for step in steps:
        if step.channel == "push":
            # One step per browser of each person who may answer, so each is sent, retried and shown on its own.
            chosen.extend((step, subscription.label) for subscription in push.subscriptions_for(question.project_id))
            continue
        if step.channel == "slack" and slack.configured():
            target = (own.slack_channel if own else "") or settings.HOOKBRIDGE_SLACK_CHANNEL
        elif step.channel == "telegram" and telegram.configured():
            target = (own.telegram_chat if own else "") or settings.HOOKBRIDGE_TELEGRAM_CHAT_ID
        elif step.channel == "discord" and discord.configured():
            target = (own.discord_channel if own else "") or settings.HOOKBRIDGE_DISCORD_CHANNEL_ID
        elif step.channel == "teams" and teams.configured():
            target = (own.teams_conversation if own else "") or settings.HOOKBRIDGE_TEAMS_CONVERSATION_ID
        elif step.channel == "email" and email.configured():
            target = recipients(own)
        elif step.channel == "admins" and email.configured():
            step = policy.Step("email", step.delay_seconds)
            target = admins_of(question)
        elif on_call_name(step.channel) is not None:
            chosen.extend(on_call_steps(question, step))
            continue
        elif step.channel == "webhook" and webhook.configured():
            target = settings.HOOKBRIDGE_WEBHOOK_URL
        else:
            continue  # the dashboard is always on; a channel not set up has nobody to reach
        if target:
            chosen.append((step, target))
    return chosen


def on_call_steps(question: Question, step: policy.Step) -> list[tuple[policy.Step, str]]:
    """An approval policy's `on-call:NAME`: the person on call when the step is due, by e-mail and on each of their
    browsers; nothing (and a note in the log) when the schedule is missing or has nobody."""
    name = on_call_name(step.channel) or ""
    when = question.created_at + timedelta(seconds=step.delay_seconds)
    person = on_call_now(question.project_id, name, when)
    if person is None:
        logger.warning("Question %s: on-call:%s reaches nobody (no such schedule, or nobody in it)", question.pk, name)
        return []
    found: list[tuple[policy.Step, str]] = []
    if email.configured() and person.email:
        found.append((policy.Step("email", step.delay_seconds), person.email))
    push_step = policy.Step("push", step.delay_seconds)
    found.extend((push_step, s.label) for s in push.subscriptions_for(question.project_id).filter(user=person))
    if not found:
        logger.warning("Question %s: on-call:%s is %s, who has no e-mail address or browser to reach", question.pk,
                       name, person.get_username())  # fmt: skip
    return found


# Where the last step lands in the window of a question someone gives up on, when the policy's own delays
# would run past it: late enough to leave the first steps their turn, early enough for a person to act.
LAST_STEP_WITHIN = 0.8


def due(question: Question, step: policy.Step, last_delay: int = 0) -> datetime:
    """When the step is sent: its delay after the ask, scaled into the question's window when it has one.

    Every step is kept and its order too, but none is promised after the asker gives up (issue 39: approvals
    give up at 590 s, and the default e-mail at 10 min was promised on every card and never sent). When
    the policy's last step would come at or after the deadline, all delays shrink by one factor, so the
    last comes at LAST_STEP_WITHIN of the window.
    """
    delay = float(step.delay_seconds)
    deadline = question.deadline
    if deadline is not None and last_delay > 0:
        window = (deadline - question.created_at).total_seconds()
        if last_delay >= window:
            delay *= max(window, 0) * LAST_STEP_WITHIN / last_delay
    return question.created_at + timedelta(seconds=delay)


def admins_of(question: Question) -> str:
    """The e-mail addresses of the question's project's admins (an approval policy's `notify: admins`)."""
    return ",".join(admin_addresses(question.project_id))


def recipients(own: NotifyPolicy | None) -> str:
    given = (own.email_to if own else "") or ",".join(settings.HOOKBRIDGE_EMAIL_TO)
    return ",".join(address.strip() for address in given.split(",") if address.strip())


def schedule(question: Question) -> list[Delivery]:
    chosen = steps_for(question)
    last = max((step.delay_seconds for step, _ in chosen), default=0)
    rows = [
        Delivery(
            question=question,
            channel=step.channel,
            target=target,
            due_at=due(question, step, last),
            push_subscription_id=push.subscription_of(target) if step.channel == "push" else None,
        )
        for step, target in chosen
    ]
    # One row per question, channel and target (a constraint): a second worker hearing the same ask adds nothing.
    return Delivery.objects.bulk_create(rows, ignore_conflicts=True)


def any_channel() -> bool:
    """Whether anyone can be reached: with no channel set up and no browser subscribed, an ask or an answer costs
    one query here (whether any browser is subscribed)."""
    return (
        slack.configured() or telegram.configured() or discord.configured() or teams.configured()
        or email.configured()
        or webhook.configured() or push.any_subscription()
    )  # fmt: skip


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


@receiver(signals.question_resolved)
def break_glass_told(sender: Any, question_id: uuid.UUID, answer: Any = None, **kwargs: Any) -> None:
    """A project admin decided alone past an approval's policy: everyone who may decide it is told at once, by
    e-mail (the dashboards show the decision, marked, as they show every decision)."""
    if answer is None or not answer.answered_by or "(break-glass:" not in answer.answered_by:
        return
    try:
        question = Question.as_resolved(question_id, answer)
        told = [p.email for p in question.eligible_people() if p.email and p.pk != answer.answered_by_user_id]
        if not told or not email.configured():
            logger.info("Question %s was decided by break-glass; nobody to tell by e-mail", question_id)
            return
        verb = "allowed" if answer.data.get("behavior") == "allow" else "denied"
        policy_name = question.requirement.get("policy") or "its policy"
        text = (
            f"{answer.answered_by} {verb} alone, past {policy_name}:\n\n  {question.short_title}\n\n"
            f"{question.requirement_sentence}\nIt is marked in the history: "
            f"{settings.HOOKBRIDGE_PUBLIC_URL.rstrip('/')}/questions/{question.pk}/\n"
        )
        subject = f"Break-glass: {question.short_title}"
        email.send([email.Mail(to, subject, text, f"<pre>{escape(text)}</pre>") for to in told])
    except Exception:
        # The decision stands whatever happens to the notice; the history marks it.
        logger.warning("Could not tell of question %s's break-glass decision", question_id, exc_info=True)


@receiver(person_deactivated, dispatch_uid="notify-forget-browsers")
def person_left(sender: Any, user_id: int, username: str, **kwargs: Any) -> None:
    """A deactivated person's browsers get no more pushes: their subscriptions go (the sender checks too)."""
    gone, _ = PushSubscription.objects.filter(user_id=user_id).delete()
    if gone:
        logger.info("Forgot %d push subscription(s) of %s, deactivated", gone, username)
