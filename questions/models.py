"""Questions agents ask and the answers people give.

The row is the truth. Every state change is a conditional UPDATE on the
question's status, so two people (or a person and a disconnecting agent) racing
on the same question cannot both win; the channel-layer messages sent on commit
are only hints that wake waiting calls and refresh dashboards.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import models, transaction
from django.utils import timezone

from audit import chain
from core import acting
from core.signals import send_on_commit
from lifecycle.models import AgentSession
from projects.access import of_user
from projects.models import (
    InProject,
    InProjectQuerySet,
    Membership,
    Project,
    Role,
    at_least,
    on_call_name,
    on_call_now,
)
from questions import endings, kinds, signals, wording
from questions.images import Image
from questions.kinds import AnswerForm, InvalidAnswer, Kind, QuestionKind, Reply
from questions.kinds import approval as approval_kind
from questions.markdown import first_line_plain
from questions.states import CancelReason, Status
from tokens.models import AgentToken

__all__ = [
    "AlreadyResolved",
    "AlreadyVoted",
    "Answer",
    "CancelReason",
    "InvalidAnswer",
    "Kind",
    "NotDecided",
    "NotEligible",
    "Question",
    "RateLimited",
    "Status",
    "Vote",
    "VoteCounted",
]


class QuestionError(Exception):
    """A request about a question that cannot be carried out; the message says why."""


class RateLimited(QuestionError):
    pass


class NotDecided(InvalidAnswer):
    """A person's answer to an approval under a policy that did not decide it; `status`: how the API says so."""

    status = 400


class VoteCounted(NotDecided):
    """Counted, and not yet enough: `decided` of `needed` people have allowed."""

    status = 202

    def __init__(self, question: Question, decided_by: list[str], needed: int) -> None:
        self.question, self.decided_by, self.needed = question, decided_by, needed
        super().__init__(
            "answer",
            f"{len(decided_by)} of {needed}: allowed by {', '.join(decided_by)}; "
            f"{needed - len(decided_by)} more must allow before the agent may go on.",
        )


class AlreadyVoted(NotDecided):
    status = 409


class NotEligible(NotDecided):
    status = 403


class AlreadyResolved(QuestionError):
    def __init__(self, question: Question) -> None:
        self.question = question
        super().__init__(question.resolution_text())


# Only a pending question takes an answer. One whose agent stopped waiting is still
# pending (see Question.agent_stopped_waiting); its answer waits for the re-ask.
ANSWERABLE = models.Q(status=Status.PENDING)
# A question with its own timeout (Ask-Me's, a tool set's default), or an approval, whose host gives up.
WITH_DEADLINE = models.Q(timeout_seconds__isnull=False) | models.Q(kind=Kind.APPROVAL)


# A question asked in the background whose agent has not polled for this long is shown as "the agent stopped
# asking" (its re-attach window starts). Clients poll every few seconds (pollIntervalMs 2 s; Claude Code every
# second), so a minute without one is a client that is gone: killed, closed, its machine asleep.
STOPPED_ASKING_AFTER = timedelta(seconds=60)
# A poll is written at most this often: a client polling every second costs one UPDATE in ten.
POLL_NOTED_EVERY = timedelta(seconds=10)
STOPPED_ASKING = "the agent stopped asking: its task was last polled at {at}"


def reattach_cutoff() -> Any:
    return timezone.now() - timedelta(seconds=settings.HOOKBRIDGE_REATTACH_WINDOW)


def reattachable() -> models.Q:
    """What a re-ask of the very same question by the same agent comes back to.

    A pending question (waited on or not), an answer the agent never received, and a
    question aborted at the agent less than the re-attach window ago: an agent that
    asks again after an abort is asking again, not asking something new.
    """
    return (
        models.Q(status=Status.PENDING)
        | models.Q(status=Status.ANSWERED, delivered_at__isnull=True)
        | models.Q(
            status=Status.CANCELLED, cancel_reason=CancelReason.CLIENT_CANCELLED, resolved_at__gte=reattach_cutoff()
        )
    )


def fingerprint(
    kind: str, text: str, options: list[dict[str, Any]], allow_free_text: bool, payload: dict[str, Any]
) -> str:
    """What makes two questions "the very same question" for re-attaching."""
    canonical = json.dumps([kind, text, options, allow_free_text, payload], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


class QuestionQuerySet(InProjectQuerySet["Question"]):
    def pending(self) -> QuestionQuerySet:
        return self.filter(status=Status.PENDING).order_by("created_at")

    def with_deadline(self) -> QuestionQuerySet:
        """Those someone gives up on at a known time (see Question.deadline): the dashboard puts them first."""
        return self.filter(WITH_DEADLINE)

    def reattach_target(self, asker: AgentToken | None, asker_name: str, key: str) -> QuestionQuerySet:
        """The asker's newest question with this fingerprint that a re-ask comes back to (see `reattachable`)."""
        mine = self.filter(asker=asker, asker_name=asker_name, fingerprint=key)
        return mine.filter(reattachable()).order_by("-created_at")

    def resolved(self) -> QuestionQuerySet:
        # As the history says and its first column shows: the most recently asked first (issue 39).
        return self.exclude(status=Status.PENDING).order_by("-created_at", "-id")


class Question(InProject):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    kind = models.CharField(max_length=32, choices=kinds.choices, default=Kind.QUESTION.value)
    text = models.TextField("question")
    options = models.JSONField(default=list, blank=True)
    allow_free_text = models.BooleanField(default=True)
    # What the kind needs beyond the text: sub-questions, hypotheses, a title...
    payload = models.JSONField(default=dict, blank=True)
    # Seconds from creation after which an unanswered question times out (None: never).
    timeout_seconds = models.FloatField(null=True, blank=True)
    asker = models.ForeignKey(AgentToken, null=True, blank=True, on_delete=models.SET_NULL)
    # Kept apart from the token so history still names the asker after the token is deleted.
    asker_name = models.CharField(max_length=100)
    fingerprint = models.CharField(max_length=64, editable=False)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    cancel_reason = models.CharField(max_length=32, choices=CancelReason.choices, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    resolved_at = models.DateTimeField(null=True, blank=True)
    # When the outcome was handed back to the agent; an answer with no delivery
    # is handed over when the same agent asks the same question again.
    delivered_at = models.DateTimeField(null=True, blank=True)
    dismissed_by = models.CharField(max_length=150, blank=True)
    # When the agent's call ended without an outcome (its own timeout, a dropped connection,
    # a restart, an abort); None while a call waits on the question. A pending question with
    # this set is still answerable for HOOKBRIDGE_REATTACH_WINDOW: the agent usually asks again.
    agent_left_at = models.DateTimeField(null=True, blank=True)
    # What ended the call, as the server saw it (a client's cancel reason is kept as sent).
    agent_left_reason = models.CharField(max_length=300, blank=True)
    session = models.ForeignKey(
        "lifecycle.AgentSession", null=True, blank=True, on_delete=models.SET_NULL, related_name="questions"
    )
    # Who said they are answering it, and when (renewed while they type): every dashboard shows it
    # until HOOKBRIDGE_CLAIM_SECONDS pass without activity. Anyone may still answer: the first answer wins.
    claimed_by = models.CharField(max_length=150, blank=True)
    claimed_at = models.DateTimeField(null=True, blank=True)
    # Asked as an MCP task (mcpapi.tasks): no call waits on it, the agent goes on working and reads the
    # outcome when it polls. Its card says so, and nobody "stopped waiting" when the call returned.
    asked_in_background = models.BooleanField(default=False)
    # When the agent last asked after it (its task's poll): one that stops polling is marked as left, as a
    # held call that ends is (expire_abandoned), and a poll brings it back. None: not polled yet.
    agent_polled_at = models.DateTimeField(null=True, blank=True)
    # And offered in the agent's own client as a form (HOOKBRIDGE_ANSWER_IN_CLIENT): its card says the first
    # answer, there or here, wins.
    offered_in_client = models.BooleanField(default=False)
    # Who must decide an approval, as its policy said when it was asked (approvals.policies.requirement):
    # {"policy", "quorum", "self_approval", "owner", "owner_name", "deciders", "timeout", "fallback"}; empty: any
    # one person who may answer. Kept on the row, so a policy edited later never changes what was asked.
    requirement = models.JSONField(default=dict, blank=True)

    objects = QuestionQuerySet.as_manager()

    class Meta:
        ordering = ["created_at"]
        indexes = [
            models.Index(fields=["status", "created_at"]),
            # With created_at: a re-ask's look-up (the asker's newest question with that fingerprint)
            # reads its few rows from here. On (asker, fingerprint) alone SQLite sorted by walking
            # the asker's whole history instead (3.5 ms after 10,000 questions, growing).
            models.Index(fields=["asker", "fingerprint", "created_at"]),
            models.Index(fields=["asker", "created_at"]),
        ]

    def __str__(self) -> str:
        return first_line_plain(self.text, 80)

    @property
    def host_title(self) -> str:
        """The agent host whose hook asked ("Codex", "Gemini CLI"), as its approval's payload names it; "" for
        a question an agent asked over MCP."""
        title = self.payload.get("host_title") if isinstance(self.payload, dict) else None
        return title if isinstance(title, str) else ""

    @property
    def time_to_answer(self) -> timedelta | None:
        if self.status != Status.ANSWERED or self.resolved_at is None:
            return None
        return self.resolved_at - self.created_at

    @property
    def claim_expires(self) -> Any:
        """When the current claim lapses; None when nobody claims the question."""
        if not self.claimed_by or self.claimed_at is None:
            return None
        return self.claimed_at + timedelta(seconds=settings.HOOKBRIDGE_CLAIM_SECONDS)

    @property
    def claimed_now(self) -> bool:
        expires = self.claim_expires
        return expires is not None and expires > timezone.now()

    @classmethod
    def release_claims_of(cls, username: str) -> int:
        """A person who left answers nothing: the questions they were answering show as nobody's again."""
        # Atomic: each release is announced to the pages once it can be read.
        with transaction.atomic():
            ids = list(cls.objects.filter(claimed_by=username, status=Status.PENDING).values_list("pk", flat=True))
            cls.objects.filter(pk__in=ids).update(claimed_by="", claimed_at=None)
            for pk in ids:
                send_on_commit(signals.question_claimed, Question, question_id=pk)
        return len(ids)

    def claim(self, by: str) -> None:
        """`by` is answering (or still is): every dashboard shows it until the claim lapses."""
        # Atomic so dashboards hear of the claim once it can be read; only a pending question is claimed.
        now = timezone.now()
        with transaction.atomic():
            claimed = Question.objects.filter(pk=self.pk, status=Status.PENDING).update(
                claimed_by=by[:150], claimed_at=now
            )
            if not claimed:
                self.refresh_from_db()
                raise AlreadyResolved(self)
            send_on_commit(signals.question_claimed, Question, question_id=self.pk)
        self.claimed_by, self.claimed_at = by[:150], now

    @property
    def waited_seconds(self) -> float | None:
        """How long the question waited for its outcome (answer, dismissal, timeout...)."""
        if self.resolved_at is None:
            return None
        return (self.resolved_at - self.created_at).total_seconds()

    @property
    def is_pending(self) -> bool:
        return self.status == Status.PENDING

    @property
    def answer_form(self) -> AnswerForm:
        """An empty answer form for this question's card."""
        return self.kind_spec.form(self)

    @property
    def kind_spec(self) -> QuestionKind:
        """What this kind of question takes as an answer and gives back (questions.kinds)."""
        return kinds.kind_of(self.kind)

    def option_values(self) -> list[str]:
        return [str(option["value"]) for option in self.options]

    def resolution_text(self) -> str:
        """What became of the question, for a person (the dashboard, the API's 409): questions.wording."""
        return wording.status_sentence(self, to_agent=False)

    @property
    def outcome_badge(self) -> tuple[str, str]:
        """The history's badge: (CSS key, words), by what the question came to (questions.wording)."""
        return wording.outcome_badge(self)

    @property
    def outcome_words(self) -> str:
        """What became of the question, for people: "was answered by alice" (questions.wording)."""
        return wording.outcome_words(self)

    @property
    def deadline(self) -> datetime | None:
        """When the asker gives up on the question, if anyone does: its own timeout, or an approval's host.

        Claude Code's hook gives up after its timeout; Hook Bridge answers "no decision" at
        HOOKBRIDGE_APPROVAL_TIMEOUT, just before, so the host can still ask at the terminal.
        """
        if self.timeout_seconds is not None:
            return self.created_at + timedelta(seconds=self.timeout_seconds)
        if self.kind == Kind.APPROVAL:
            return self.created_at + timedelta(seconds=settings.HOOKBRIDGE_APPROVAL_TIMEOUT)
        return None

    @property
    def answerer(self) -> str:
        return wording.answerer(self)

    @property
    def short_title(self) -> str:
        """The question in a few words, for toasts and banners: its title, or its first line."""
        return first_line_plain(str(self.payload.get("title") or self.text), 80)

    @property
    def does(self) -> tuple[str, str]:
        """An approval's tool use as (verb, what): ("runs", "make deploy"), ("edits", "src/app.py")."""
        return approval_kind.does(self.payload)

    @property
    def folder(self) -> str:
        """The last part of the folder the agent works in (an approval's cwd, else its session's label)."""
        cwd = self.payload.get("cwd") if isinstance(self.payload, dict) else None
        if isinstance(cwd, str) and cwd.strip("/"):
            return cwd.rstrip("/").rsplit("/", 1)[-1]
        return self.session.project_name if self.session_id and self.session else ""

    def status_sentence(self, *, to_agent: bool) -> str:
        """The question's state in one sentence; `to_agent`: worded for the agent that asked (questions.wording)."""
        return wording.status_sentence(self, to_agent=to_agent)

    @classmethod
    def ask(
        cls,
        *,
        asker: AgentToken | None,
        asker_name: str,
        text: str,
        options: list[dict[str, Any]],
        allow_free_text: bool = True,
        kind: str = Kind.QUESTION,
        payload: dict[str, Any] | None = None,
        timeout_seconds: float | None = None,
        session: AgentSession | None = None,
        key: str | None = None,
        new_id: uuid.UUID | None = None,
        project: Project | None = None,
        in_background: bool = False,
        requirement: dict[str, Any] | None = None,
    ) -> tuple[Question, bool]:
        """Create a pending question, or re-attach to the same asker's identical one.

        Returns the question and whether it was re-attached. Re-attaching is what
        keeps an answer from being lost: an agent whose call ended (its timeout, a
        dropped connection, a restart, an abort) asks again and finds the question
        it left (see `reattachable`), answered while it was away or still open.

        `session`: the agent session it belongs to (default: the asker's newest open one);
        `key`: what makes two asks the same question, when not everything asked (approvals:
        the same tool and input, asked by a hook and by the prompt tool at once, is one).
        `new_id`: the id a new question gets, chosen by a caller that listens for it before it exists.
        `in_background`: asked as a task that no call waits on (a re-ask as a task marks the question so).
        """
        payload = payload or {}
        key = key or fingerprint(kind, text, options, allow_free_text, payload)
        # Atomic so the look-up and the create/revive cannot interleave with a
        # concurrent identical ask from the same agent into two new rows.
        with transaction.atomic():
            earlier = cls.objects.select_for_update().reattach_target(asker, asker_name, key).first()
            if earlier is not None:
                earlier._asked_again(in_background=in_background)
                return earlier, True

            limit = settings.HOOKBRIDGE_QUESTIONS_PER_MINUTE
            if asker is not None and limit:
                recent = cls.objects.filter(asker=asker, created_at__gte=timezone.now() - timedelta(minutes=1)).count()
                if recent >= limit:
                    raise RateLimited(
                        f"rate limit: at most {limit} new questions a minute per token; try again shortly"
                    )
            session = session or AgentSession.active_for(asker)
            question = cls.objects.create(
                id=new_id or uuid.uuid4(),
                session=session,
                # Its session's project; without one, its token's (or the default).
                project_id=(
                    project.pk
                    if project
                    else session.project_id
                    if session
                    else Project.for_agent(asker.project_id if asker else None)
                ),
                kind=kind,
                text=text,
                options=options,
                allow_free_text=allow_free_text,
                payload=payload,
                timeout_seconds=timeout_seconds,
                asker=asker,
                asker_name=asker_name,
                fingerprint=key,
                asked_in_background=in_background,
                requirement=requirement or {},
            )
            send_on_commit(signals.question_asked, Question, question_id=question.pk, new=True, question=question)
        return question, False

    def offer_in_client(self) -> None:
        """Offered in the agent's client too (mcpapi.tasks): every dashboard's card says so."""
        if Question.objects.filter(pk=self.pk, offered_in_client=False).update(offered_in_client=True):
            self.offered_in_client = True
            send_on_commit(signals.question_asked, Question, question_id=self.pk, new=False, question=self)

    def no_longer_in_client(self) -> None:
        """The person at the agent's client declined the form: the card stops saying it is offered there."""
        if Question.objects.filter(pk=self.pk, offered_in_client=True).update(offered_in_client=False):
            self.offered_in_client = False
            send_on_commit(signals.question_asked, Question, question_id=self.pk, new=False, question=self)

    def _asked_again(self, *, in_background: bool) -> None:
        """Question.ask's re-attach, within its transaction: the question back on every dashboard as it now is."""
        changes: dict[str, Any] = {}
        if self.status == Status.CANCELLED:
            # Aborted, and asked again within the window: back on every dashboard.
            changes = {"status": Status.PENDING, "cancel_reason": "", "resolved_at": None}
            changes.update(agent_left_at=None, agent_left_reason="")
        elif self.status == Status.PENDING and self.asked_in_background != in_background:
            if in_background:  # back as a task: nobody's call left it, none will wait on it
                changes.update(agent_left_at=None, agent_left_reason="")
        else:
            return
        # Its card says which way the agent now waits: a call held open, or a task it polls.
        changes["asked_in_background"] = in_background
        Question.objects.filter(pk=self.pk, status=self.status).update(**changes)
        self.refresh_from_db()
        send_on_commit(signals.question_asked, Question, question_id=self.pk, new=False, question=self)

    @classmethod
    def decided(
        cls,
        *,
        asker: AgentToken | None,
        asker_name: str,
        kind: str,
        text: str,
        payload: dict[str, Any],
        reply: Reply,
        by_name: str,
        source: str,
        session: AgentSession | None = None,
        asked_at: Any = None,
        decided_at: Any = None,
    ) -> Question:
        """A question decided the moment it was asked (a team rule): kept in history, never on a dashboard.

        No signal: there is no card to add or remove, and nobody waits on it. `decided_at` is when the
        decision was made (the row is written after the agent has it), so its wait is the rule's own time.
        """
        now = decided_at or timezone.now()
        asked_at = asked_at or now
        # Atomic so history never shows the decision without its answer.
        with transaction.atomic():
            question = cls.objects.create(
                session=session,
                kind=kind,
                text=text,
                payload=payload,
                asker=asker,
                asker_name=asker_name,
                fingerprint=fingerprint(kind, text, [], False, payload),
                allow_free_text=False,
                status=Status.ANSWERED,
                created_at=asked_at,
                resolved_at=now,
                delivered_at=now,
            )
            Answer.objects.create(
                question=question,
                text=reply.text,
                data=reply.data,
                option=reply.option,
                answered_by=by_name[:150],
                source=source,
                created_at=now,
            )
            ruled = {"answer": reply.text[:1000], "data": reply.data, "source": source, "asker": asker_name,
                     "digest": str(payload.get("digest") or "")}  # fmt: skip
            chain.record("approval.decided", acting.Actor("system", by_name[:200]), project=question.project,
                         target=f"{kind} {question.pk}", target_id=question.pk, details=ruled)  # fmt: skip
        return question

    def record_answer(
        self,
        text: Any = None,
        *,
        option: str | None = None,
        reply: Reply | None = None,
        by_user: Any = None,
        by_token: AgentToken | None = None,
        source: str = "dashboard",
        remote_addr: str | None = None,
        by_name: str | None = None,
        images: Sequence[Image] = (),
        break_glass: str = "",
    ) -> Answer:
        """Record an answer; the first one wins and any later one raises AlreadyResolved.

        Pending questions take answers, including those whose agent stopped waiting
        (the answer waits for the agent's re-ask). `images`, checked by questions.images, go with it.
        An approval with a `requirement` is decided by votes (`_vote`): a NotDecided says why this one did not.
        """
        if images and not self.kind_spec.takes_images:
            raise InvalidAnswer("images", f"A {self.get_kind_display().lower()} answer takes no images.")
        if reply is None:
            reply = self.kind_spec.parse(self, text, option)
        if self.requirement:
            return self._vote(reply, by_user, by_token, source, remote_addr, break_glass)
        if by_name:
            answered_by = by_name
        elif by_user is not None and by_user.is_authenticated:
            answered_by = by_user.get_username()
        elif by_token is not None:
            answered_by = by_token.name
        else:
            answered_by = "unknown"
        user = by_user if by_user is not None and by_user.is_authenticated else None
        # Atomic so the status flip and the Answer row land together: nobody can
        # see an "answered" question without its answer.
        with transaction.atomic():
            return self._answer(reply, answered_by, user, by_token, source, remote_addr, images)

    def _answer(
        self,
        reply: Reply,
        answered_by: str,
        user: Any,
        by_token: AgentToken | None,
        source: str,
        remote_addr: str | None,
        images: Sequence[Image] = (),
        action: str = "",
    ) -> Answer:
        """The one conditional update that decides (inside the caller's transaction); AlreadyResolved if too late."""
        now = timezone.now()
        won = (
            Question.objects.filter(pk=self.pk)
            .filter(ANSWERABLE)
            .update(status=Status.ANSWERED, cancel_reason="", resolved_at=now)
        )
        if not won:
            self.refresh_from_db()
            raise AlreadyResolved(self)
        answer = Answer.objects.create(
            question=self,
            text=reply.text,
            data=reply.data,
            option=reply.option,
            answered_by=answered_by[:150],
            answered_by_user=user,
            answered_by_token=by_token,
            source=source,
            remote_addr=remote_addr,
            image_count=len(images),
            created_at=now,
        )
        AnswerImage.objects.bulk_create(
            AnswerImage(answer=answer, position=n, mime_type=image.mime_type, data=image.data, size=len(image.data))
            for n, image in enumerate(images)
        )
        self.status, self.resolved_at = Status.ANSWERED, now
        self._record_decision(answer, reply, user, by_token, action)
        send_on_commit(signals.question_resolved, Question, question_id=self.pk, answer=answer)
        return answer

    def _record_decision(
        self, answer: Answer, reply: Reply, user: Any, by_token: AgentToken | None, action: str
    ) -> None:
        """The answer's audit entry, in its transaction: who, through what, and the digest of what they saw."""
        if not action:
            action = "approval.decided" if self.kind == Kind.APPROVAL.value else "question.answered"
        if answer.source == "policy":
            actor = acting.Actor("system", answer.answered_by)
            action = "approval.fallback"
        elif user is not None or by_token is not None:
            actor = acting.by(user, by_token)
        else:
            # Whoever acts here (a command's OS user); else the name the channel vouches for ("ann (via link)").
            actor = acting.actor()
            if actor == acting.SYSTEM:
                actor = acting.Actor("person", answer.answered_by)
        # An edited input may be long: past 4,000 characters only the decision is kept (the answer row has it all).
        data = reply.data
        if len(json.dumps(data, default=str)) > 4000:
            data = {"behavior": data.get("behavior")}
        details = {
            "answer": reply.text[:1000], "option": reply.option, "data": data, "source": answer.source,
            "answered_by": answer.answered_by, "asker": self.asker_name,
            "digest": str(self.payload.get("digest") or ""),
        }  # fmt: skip
        chain.record(action, actor, project=self.project, target=f"{self.kind} {self.pk}", target_id=self.pk,
                     details=details, ip=answer.remote_addr)  # fmt: skip

    def _vote(
        self,
        reply: Reply,
        by_user: Any,
        by_token: AgentToken | None,
        source: str,
        remote_addr: str | None,
        break_glass: str,
    ) -> Answer:
        """One person's decision on an approval whose policy names who decides (Question.requirement).

        Any eligible person's deny decides; an allow is counted, and decides once `quorum` distinct people
        have allowed. A token acts as the person who owns it; one with no owner is a bot and decides nothing
        here. A project admin may decide alone past the quorum with a reason (break-glass), marked as such.
        """
        needs = self.requirement
        policy = str(needs.get("policy") or "the team's policy")
        person = by_user if by_user is not None and by_user.is_authenticated else None
        if person is None and by_token is not None and by_token.user_id is not None:
            person = by_token.user
        if person is None:
            raise NotEligible("by", f"{policy} needs people to decide: a token with no owner cannot.")
        self._check_eligible(person, policy)
        allowed = reply.data.get("behavior") == "allow"
        quorum = int(needs.get("quorum") or 1)
        if break_glass and not at_least(of_user(person).role(self.project_id), Role.ADMIN):
            raise NotEligible("breakGlass", f"Only an admin of {self.project} may decide alone past {policy}.")
        if allowed and not needs.get("self_approval", True) and person.pk == needs.get("owner"):
            raise NotEligible(
                "by",
                f"{person.get_username()} may not approve their own agent's request: {policy} forbids "
                "self-approval. Someone else must decide.",
            )
        if allowed and quorum > 1 and set(reply.data) - {"behavior"}:
            raise InvalidAnswer(
                "updatedInput", f"{policy} needs {quorum} people to allow the same input: allow it as asked, or deny."
            )
        counted: list[str] = []
        # Atomic, and the question's row locked first: two people allowing at once on two workers are counted
        # one after the other, so exactly one of them sees the quorum met and decides.
        with transaction.atomic():
            locked = Question.objects.select_for_update().filter(pk=self.pk).first()
            if locked is None or locked.status != Status.PENDING:
                self.refresh_from_db()
                raise AlreadyResolved(self)
            earlier = Vote.objects.filter(question=self, user=person).first()
            if earlier is not None:
                raise AlreadyVoted(
                    "by",
                    f"{person.get_username()} already {earlier.decision}ed this at "
                    f"{timezone.localtime(earlier.created_at):%H:%M}; {policy} needs someone else.",
                )
            reason = str(reply.data.get("message") or "") if not allowed else break_glass
            self._cast_vote(person, by_token, allowed, policy, quorum, source, reason, bool(break_glass), remote_addr)
            if not allowed or break_glass:
                named = f"{person.get_username()} (break-glass: {break_glass})" if break_glass else None
                decided = Reply(f"{reply.text} ({named})", reply.data, reply.option) if named else reply
                action = "approval.break_glass" if break_glass else ""
                return self._answer(
                    decided, named or person.get_username(), person, by_token, source, remote_addr, action=action
                )
            counted = list(
                Vote.objects.filter(question=self, decision="allow")
                .order_by("created_at", "pk")
                .values_list("user__username", flat=True)
            )
            if len(counted) >= quorum:
                names = ", ".join(counted)
                decided = Reply(f"{reply.text} ({names})", reply.data, reply.option)
                return self._answer(decided, names, person, by_token, source, remote_addr)
            send_on_commit(signals.vote_counted, Question, question_id=self.pk)
        raise VoteCounted(self, counted, quorum)

    def _cast_vote(
        self,
        person: Any,
        by_token: AgentToken | None,
        allowed: bool,
        policy: str,
        quorum: int,
        source: str,
        reason: str,
        break_glass: bool,
        ip: str | None,
    ) -> None:
        """One person's vote, and its audit entry with the digest of the input they were shown (in the caller's
        transaction)."""
        decision, digest = "allow" if allowed else "deny", str(self.payload.get("digest") or "")
        Vote.objects.create(question=self, user=person, decision=decision, reason=reason[:1000], source=source,
                            break_glass=break_glass, digest=digest)  # fmt: skip
        said = {"decision": decision, "policy": policy, "quorum": quorum, "source": source, "reason": reason[:1000],
                "digest": digest}  # fmt: skip
        chain.record("approval.voted", acting.by(person, by_token), project=self.project,
                     target=f"approval {self.pk}", target_id=self.pk, details=said, ip=ip)  # fmt: skip

    def _check_eligible(self, person: Any, policy: str) -> None:
        """Whether `person` may decide under the requirement's deciders (default: the project's answerers)."""
        if not person.is_active:
            raise NotEligible("by", f"{person.get_username()} is not active.")
        role = of_user(person).role(self.project_id)
        deciders = [str(d) for d in self.requirement.get("deciders") or []]
        if not deciders:
            if not at_least(role, Role.ANSWERER):
                raise NotEligible("by", f"{person.get_username()} may not answer in {self.project}.")
            return
        on_call: list[str] = []
        for decider in deciders:
            if decider.startswith("role:") and decider[5:] in Role.values and at_least(role, decider[5:]):
                return
            if (schedule := on_call_name(decider)) is not None:
                # Whoever is on call when they decide, not when it was asked: a hand-off passes the pager on.
                now = on_call_now(self.project_id, schedule)
                if now is not None and now.pk == person.pk and at_least(role, Role.VIEWER):
                    return
                on_call.append(f"{decider} is {now.get_username() if now is not None else 'nobody'} now")
            if decider == person.get_username():
                return
        also = f" ({'; '.join(on_call)})" if on_call else ""
        raise NotEligible(
            "by", f"{policy} is decided by {', '.join(deciders)}{also}; {person.get_username()} is not one of them."
        )

    def eligible_people(self) -> list[Any]:
        """Who may decide this approval under its requirement's deciders, now (the break-glass notice goes to them)."""
        deciders = [str(d) for d in self.requirement.get("deciders") or []] or [f"role:{Role.ANSWERER.value}"]
        members = Membership.objects.filter(project_id=self.project_id, user__is_active=True).select_related("user")
        found: dict[int, Any] = {}
        for decider in deciders:
            if decider.startswith("role:") and decider[5:] in Role.values:
                found.update((m.user.pk, m.user) for m in members if at_least(m.role, decider[5:]))
            elif (schedule := on_call_name(decider)) is not None:
                person = on_call_now(self.project_id, schedule)
                if person is not None and person.is_active:
                    found[person.pk] = person
            else:
                named = get_user_model().objects.filter(username=decider, is_active=True).first()
                if named is not None:
                    found[named.pk] = named
        return sorted(found.values(), key=lambda person: person.get_username())

    @property
    def requirement_sentence(self) -> str:
        return wording.requirement_sentence(self)

    @property
    def votes_so_far(self) -> list[Vote]:
        """The allows counted toward an approval's quorum, in order (the card's "1 of 2: ann allowed at …")."""
        if not self.requirement:
            return []
        return list(self.votes.filter(decision="allow").select_related("user").order_by("created_at", "pk"))

    def decide_by_policy(self, decision: dict[str, Any], by_name: str) -> Answer:
        # by_name: "the policy 'pushes need two' (fallback)", as history and the host read it.
        """Nobody decided in time and the approval's policy does (its fallback); AlreadyResolved if someone did."""
        reply = self.kind_spec.parse(self, decision)
        with transaction.atomic():
            return self._answer(reply, by_name, None, None, "policy", None)

    @classmethod
    def as_resolved(cls, question_id: uuid.UUID, answer: Answer | None) -> Question:
        """For question_resolved's receivers: the answered question in hand, else the row as the change left it."""
        if answer is not None:
            return answer.question
        return cls.objects.select_related("answer").get(pk=question_id)

    def _end(self, ending: endings.Ending, **values: Any) -> bool:
        """This question moved by `ending` (questions.endings); False when something else got there first."""
        moved = endings.apply(Question.objects.all(), [self.pk], ending, **values)
        self.refresh_from_db()
        return bool(moved)

    def dismiss(self, by: str) -> None:
        """A person declines to answer; the agent is told to go on by its own judgement."""
        # Atomic: the dismissal and its audit entry land together.
        with transaction.atomic():
            dismissed = self._end(endings.DISMISSED, dismissed_by=by)
            if dismissed:
                chain.record("question.dismissed", project=self.project, target=f"{self.kind} {self.pk}",
                             target_id=self.pk, details={"dismissed_by": by, "asker": self.asker_name})  # fmt: skip
        if not dismissed:
            raise AlreadyResolved(self)

    def cancel(self, reason: CancelReason) -> bool:
        """Cancel if still pending; False when something else resolved it first."""
        return self._end(endings.CANCELLED, cancel_reason=reason)

    def abort(self, why: str) -> bool:
        """The person at the agent aborted the call (Esc): the question leaves every dashboard.

        A re-ask within the re-attach window still comes back to it (see `reattachable`).
        False when something else resolved it first.
        """
        return self._end(endings.ABORTED, agent_left_at=timezone.now(), agent_left_reason=why)

    def host_stopped_waiting(self, why: str, *, server_restarted: bool = False) -> bool:
        """An approval's host closed its request (answered in the terminal, Esc, its hook timeout), or the server
        cut it as it stopped (`server_restarted`: nobody decided, and the record says so).

        Unlike a question, nobody asks an approval again: the host has moved on, so the card
        leaves every dashboard. False when something else resolved it first.
        """
        ending = endings.SERVER_CUT if server_restarted else endings.HOST_DECIDED
        return self._end(ending, agent_left_at=timezone.now(), agent_left_reason=why)

    def agent_stopped_waiting(self, why: str) -> bool:
        """The agent's call ended without an outcome, but nobody said no: the question stays answerable.

        A client's own timeout, a dropped connection or a restart is not a person
        declining. The dashboards mark the card; an answer given now is handed over
        when the agent asks again. After HOOKBRIDGE_REATTACH_WINDOW `expire_abandoned`
        withdraws it. False when it was no longer pending, or already marked.
        """
        return bool(Question.agents_stopped_waiting([self.pk], why))

    def agent_waiting_again(self) -> bool:
        """A call waits on the question again (a re-ask, wait_for_answer): the dashboards drop the mark."""
        cleared = endings.apply(Question.objects.all(), [self.pk], endings.AGENT_BACK)
        self.agent_left_at, self.agent_left_reason = None, ""
        return bool(cleared)

    @classmethod
    def agents_stopped_waiting(cls, question_ids: list[uuid.UUID], why: str) -> int:
        """agent_stopped_waiting for many questions at once: a worker stopping with 2,000 calls held.

        One question's card gets its notice; for many, dashboards are told once to fetch their state again,
        rather than once per question (each telling makes the event stream send the whole queue: 2,000 calls
        cut at once were told four times, and that took most of the time to let them go). Returns how many
        were marked.
        """
        return endings.apply(
            cls.objects.all(), question_ids, endings.AGENT_LEFT, agent_left_at=timezone.now(), agent_left_reason=why
        )

    def agent_polled(self) -> None:
        """The agent asked after its background question (its task's poll): noted, and a mark of its having
        stopped asking is dropped."""
        now = timezone.now()
        if self.agent_polled_at is None or now - self.agent_polled_at >= POLL_NOTED_EVERY:
            Question.objects.filter(pk=self.pk).update(agent_polled_at=now)
            self.agent_polled_at = now
        if self.agent_left_at is not None and self.status == Status.PENDING:
            self.agent_waiting_again()

    @classmethod
    def stopped_asking(cls) -> int:
        """Background questions whose agent has not polled for STOPPED_ASKING_AFTER: marked as left, so their
        cards say so and they leave the queue after the re-attach window, as any abandoned question does."""
        quiet_since = timezone.now() - STOPPED_ASKING_AFTER
        not_polled = models.Q(agent_polled_at__lt=quiet_since)
        never_polled = models.Q(agent_polled_at__isnull=True, created_at__lt=quiet_since)
        silent = cls.objects.filter(
            not_polled | never_polled, status=Status.PENDING, asked_in_background=True, agent_left_at__isnull=True
        )
        marked = 0
        for pk, polled, created in silent.values_list("pk", "agent_polled_at", "created_at"):
            at = timezone.localtime(polled or created).strftime("%H:%M:%S")
            marked += cls.agents_stopped_waiting([pk], STOPPED_ASKING.format(at=at))
        return marked

    @property
    def agent_left(self) -> bool:
        return self.status == Status.PENDING and self.agent_left_at is not None

    @property
    def kept_until(self) -> Any:
        """When a question whose agent stopped waiting is withdrawn, unless the agent asks again."""
        if self.agent_left_at is None:
            return None
        return self.agent_left_at + timedelta(seconds=settings.HOOKBRIDGE_REATTACH_WINDOW)

    @classmethod
    def expire_abandoned(cls) -> int:
        """Withdraw what nobody waits for any more; returns how many questions ended.

        A question whose agent stopped waiting longer than the re-attach window ago is
        cancelled for good; one past its own timeout (nobody waiting to time it out) times out.
        First, a background question whose agent stopped polling is marked as left (stopped_asking).
        """
        ended = 0
        cls.stopped_asking()
        cutoff = reattach_cutoff()
        gone = cls.objects.filter(agent_left_at__lt=cutoff)
        for pk in gone.filter(status=Status.PENDING).values_list("pk", flat=True):
            ended += endings.apply(gone, [pk], endings.AGENT_GONE)
        now = timezone.now()
        for question in cls.objects.filter(status=Status.PENDING, timeout_seconds__isnull=False):
            assert question.timeout_seconds is not None
            if question.created_at + timedelta(seconds=question.timeout_seconds) <= now:
                ended += question.time_out()
        return ended

    def time_out(self) -> bool:
        """Nobody decided in time. An approval's policy may decide then (its fallback); else it times out."""
        decision = self.fallback_decision()
        if decision is not None:
            try:
                self.decide_by_policy(decision, by_name=f"{self.requirement.get('policy')} (fallback)")
            except AlreadyResolved:  # a person decided in the last moment: theirs stands
                return False
            return True
        return self._end(endings.TIMED_OUT)

    def fallback_decision(self) -> dict[str, Any] | None:
        """What the approval's policy decides when nobody did in time; None: nothing (the host's own prompt asks)."""
        needs = self.requirement
        if not needs or needs.get("fallback") == "host":
            return None
        if needs.get("fallback") == "allow":
            return {"behavior": "allow"}
        timeout = needs.get("timeout")
        said = f"nobody decided within {wording.seconds(float(timeout))}" if timeout else "nobody decided in time"
        return {"behavior": "deny", "message": f"Denied by {needs.get('policy')}: {said}, and its fallback is deny."}

    def mark_delivered(self) -> None:
        Question.mark_all_delivered([self.pk])

    @staticmethod
    def mark_all_delivered(question_ids: list[uuid.UUID]) -> None:
        Question.objects.filter(pk__in=question_ids, delivered_at__isnull=True).update(delivered_at=timezone.now())


class Answer(models.Model):
    question = models.OneToOneField(Question, on_delete=models.CASCADE, related_name="answer")
    text = models.TextField()
    option = models.CharField(max_length=200, blank=True, help_text="The chosen option's value, if any.")
    data = models.JSONField(default=dict, blank=True, help_text="The structured answer, as the agent gets it.")
    answered_by = models.CharField(max_length=150)
    answered_by_user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    answered_by_token = models.ForeignKey(AgentToken, null=True, blank=True, on_delete=models.SET_NULL)
    source = models.CharField(max_length=16, default="dashboard")
    remote_addr = models.GenericIPAddressField("from address", null=True, blank=True)
    # How many AnswerImage rows go with it: the wake-up says so, and the woken call reads them only then.
    image_count = models.PositiveSmallIntegerField(default=0)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.answered_by}: {self.text[:60]}"

    @property
    def image_numbers(self) -> range:
        """1, 2, … for each image given with it: the numbers in its images' addresses."""
        return range(1, self.image_count + 1)

    @property
    def where(self) -> str:
        """Which way the answer came: "on the dashboard", "in Slack", "in the agent's own client" (wording)."""
        return wording.SOURCES.get(self.source, f"through {self.source}")

    @property
    def display(self) -> str:
        """The answer as the person saw it: a chosen option's label, with its value when that says more."""
        for option in self.question.options:
            if self.option and str(option.get("value")) == self.option:
                label = str(option.get("label", self.option))
                # "Yes", not "Yes (yes)" (issue 29): the value is shown only where it differs from the label.
                return label if label.casefold() == self.option.casefold() else f"{label} ({self.option})"
        return self.text


class Vote(models.Model):
    """One person's decision on an approval whose policy counts people (Question.requirement)."""

    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="votes")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    decision = models.CharField(max_length=8, choices=[("allow", "Allow"), ("deny", "Deny")])
    reason = models.CharField(max_length=1000, blank=True)
    source = models.CharField(max_length=16, default="dashboard")
    # A project admin deciding alone past the quorum, with `reason`.
    break_glass = models.BooleanField(default=False)
    # What the person saw (the approval's payload digest): a decision is for that input.
    digest = models.CharField(max_length=64, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["question", "created_at", "id"]
        constraints = [models.UniqueConstraint(fields=["question", "user"], name="one_vote_per_person")]

    def __str__(self) -> str:
        return f"{self.user} {self.decision}ed {self.question_id}"


class AnswerImageQuerySet(models.QuerySet["AnswerImage"]):
    def for_question(self, question_id: uuid.UUID) -> list[AnswerImage]:
        """The images of a question's answer, in the order given (by the question: a woken call's answer is
        the wake-up's copy, not a row)."""
        return list(self.filter(answer__question_id=question_id).order_by("position"))


class AnswerImage(models.Model):
    """An image given with an answer (questions.images checked it): the agent gets it as MCP image content."""

    answer = models.ForeignKey(Answer, on_delete=models.CASCADE, related_name="images")
    position = models.PositiveSmallIntegerField()
    mime_type = models.CharField(max_length=16)
    data = models.BinaryField()
    size = models.PositiveIntegerField()

    objects = AnswerImageQuerySet.as_manager()

    class Meta:
        ordering = ["answer", "position"]
        constraints = [models.UniqueConstraint(fields=["answer", "position"], name="one_image_per_position")]

    def __str__(self) -> str:
        return f"Image {self.position + 1} of answer {self.answer_id} ({self.mime_type}, {self.size:,} bytes)"


class SavedReply(models.Model):
    """A reply a person keeps for reuse: one click or Alt+digit puts it into any answer box (questions.replies)."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="saved_replies")
    text = models.TextField(max_length=2000)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["created_at", "id"]
        verbose_name_plural = "saved replies"
        constraints = [models.UniqueConstraint(fields=["user", "text"], name="one_saved_reply_per_text")]

    def __str__(self) -> str:
        return f"{self.user}: {self.text[:60]}"
