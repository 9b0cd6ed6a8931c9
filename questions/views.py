"""Answering and dismissing questions on the dashboard, one question's page, and the history of past ones."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_POST, require_safe

from core.htmx import HtmxHttpRequest
from projects import access
from questions import analytics, exports, images, queue, replies
from questions.forms import BatchDecision, HistoryFilter
from questions.kinds import InvalidAnswer
from questions.models import AlreadyResolved, AnswerImage, NotDecided, Question, SavedReply, VoteCounted
from tokens.auth import client_address


def _closed(request: HttpRequest, exc: AlreadyResolved) -> HttpResponse:
    """409: the question left pending before this request; the card says what became of it."""
    context = {"question": exc.question, "message": str(exc)}
    return render(request, "questions/card.html#question-closed", context, status=409)


@require_POST
@login_required
def answer(request: HtmxHttpRequest, question_id: uuid.UUID) -> HttpResponse:
    question = access.visible_or_404(request, Question.objects.all(), pk=question_id)
    access.require(request, question.project_id)
    form = question.kind_spec.form(question, request.POST)
    if not form.is_valid() or form.reply is None:
        context = {"question": question, "form": form}
        return render(request, "questions/card.html#question-card", context, status=422)
    try:
        given = _pasted_images(request)
        question.record_answer(
            reply=form.reply,
            by_user=request.user,
            remote_addr=client_address(request),
            images=given,
            break_glass=str(getattr(form, "break_glass", "")),
        )
    except NotDecided as exc:
        # Counted and waiting for more people, or refused by the approval's policy: the card says which.
        context = {"question": question, "form": form, "vote_notice": str(exc), "vote_refused": True}
        if isinstance(exc, VoteCounted):  # the card lists who allowed; the person is told only what is left
            more = exc.needed - len(exc.decided_by)
            context["vote_notice"] = f"Your allow is counted: {more} more must allow before the agent may go on."
            context["vote_refused"] = False
        return render(request, "questions/card.html#question-card", context)
    except InvalidAnswer as exc:
        # The card comes back as typed (its text kept), saying what is wrong with the images.
        context = {"question": question, "form": form, "image_error": str(exc)}
        return render(request, "questions/card.html#question-card", context, status=422)
    except AlreadyResolved as exc:
        return _closed(request, exc)
    # The card goes; the toast says where the answer went.
    return render(request, "questions/card.html#answer-sent", {"question": question})


# A first run teaches by doing: a real question, asked as an agent asks, that a new user answers
# before wiring any agent. It is stored and answered like any other (history keeps it).
SAMPLE_ASKER = "Demo agent"
SAMPLE_TEXT = """**A sample question.** Agents ask like this when they need a person: which database should the new \
service use?

Choose an option (a click or its number only chooses), then **Send**. An agent waiting on `ask_question` gets back \
`{"answer": "postgres"}` and carries on."""
SAMPLE_OPTIONS = [
    {"value": "postgres", "label": "PostgreSQL", "description": "What the team runs already"},
    {"value": "sqlite", "label": "SQLite", "description": "One file, nothing to run"},
]


@require_POST
@login_required
def sample(request: HtmxHttpRequest) -> HttpResponse:
    """Ask the built-in demo agent's question: its card reaches every open dashboard as any new question does."""
    # A key of its own each time: a sample answered before is not the "same question asked again".
    key = f"sample-{uuid.uuid4()}"
    project = access.answering_project(request.user)
    if project is None:
        raise PermissionDenied("A sample question needs the answerer role in some project.")
    Question.ask(
        asker=None, asker_name=SAMPLE_ASKER, text=SAMPLE_TEXT, options=SAMPLE_OPTIONS, key=key, project=project
    )
    return HttpResponse(status=204)


def _pasted_images(request: HttpRequest) -> list[images.Image]:
    """The images pasted or dropped into the card's answer (its `images` file field), checked."""
    declared = request.META.get("CONTENT_LENGTH") or "0"
    if declared.isdigit() and int(declared) > images.answer_body_limit():
        most, largest = settings.HOOKBRIDGE_MAX_IMAGES, settings.HOOKBRIDGE_MAX_IMAGE_BYTES
        raise InvalidAnswer("images", f"Too much at once: at most {most} images of {largest // 1024 // 1024} MB each.")
    return images.from_uploads(request.FILES.getlist("images"))


@require_safe
@login_required
def answer_image(request: HttpRequest, answer_id: int, number: int) -> HttpResponse:
    """An image given with an answer, for the history and the question's page (`number` counts from 1)."""
    image = access.visible_or_404(
        request, AnswerImage.objects.all(), "answer__question__project", answer_id=answer_id, position=number - 1
    )
    response = HttpResponse(bytes(image.data), content_type=image.mime_type)
    # Only ever an image: checked from its bytes when kept, and never sniffed as anything else.
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Disposition"] = f'inline; filename="answer-{answer_id}-{number}.{image.mime_type.split("/")[1]}"'
    response["Cache-Control"] = "private, max-age=86400"
    return response


@require_POST
@login_required
def claim(request: HtmxHttpRequest, question_id: uuid.UUID) -> HttpResponse:
    """The person is answering this question: every dashboard says so (the push renders the line)."""
    question = access.visible_or_404(request, Question.objects.all(), pk=question_id)
    access.require(request, question.project_id)
    try:
        question.claim(by=request.user.get_username())
    except AlreadyResolved as exc:
        return _closed(request, exc)
    return HttpResponse(status=204)


@require_POST
@login_required
def decide_batch(request: HtmxHttpRequest) -> HttpResponse:
    """Several approvals allowed or denied at once, after the dashboard listed what each runs (issue 42).

    Each is decided on its own, as if answered from its card: the first answer still wins, so one decided
    meanwhile (elsewhere, or by its host) is said and skipped, and the others are decided all the same."""
    seen = access.of_user(request.user)
    form = BatchDecision(request.POST, seen=seen)
    if not form.is_valid():
        problems = [f"{name}: {error}" for name, errors in form.errors.items() for error in errors]
        notices = [("Nothing was decided. " + " ".join(problems), "warn")]
        return render(request, "questions/card.html#batch-decided", {"notices": notices}, status=422)
    decided: list[str] = []
    skipped: list[str] = []
    for question in form.cleaned_data["question"]:
        if not seen.may_answer(question.project_id):
            skipped.append(f"“{question.short_title}”: you may only look in {question.project}")
            continue
        try:
            question.record_answer(form.decision(), by_user=request.user, remote_addr=client_address(request))
        except AlreadyResolved:
            skipped.append(f"“{question.short_title}” {question.outcome_words}")
            continue
        except NotDecided as exc:  # its policy counts people: counted and waiting, or not this person's to decide
            skipped.append(f"“{question.short_title}”: {exc}")
            continue
        # As the card and the confirmation said it: "runs `make deploy`", "edits `src/app.py`" (issue 55).
        verb, what = question.does
        decided.append(f"{question.asker_name} {verb} `{what[:200]}`")
    verb = "Allowed" if form.cleaned_data["behavior"] == "allow" else "Denied"
    notices = []
    if decided:
        notices.append((f"{verb} {len(decided)}: " + "; ".join(decided), "ok"))
    if skipped:
        notices.append(("Not decided here: " + "; ".join(skipped), "warn"))
    return render(request, "questions/card.html#batch-decided", {"notices": notices})


@require_POST
@login_required
def dismiss(request: HtmxHttpRequest, question_id: uuid.UUID) -> HttpResponse:
    question = access.visible_or_404(request, Question.objects.all(), pk=question_id)
    access.require(request, question.project_id)
    try:
        question.dismiss(by=request.user.get_username())
    except AlreadyResolved as exc:
        return _closed(request, exc)
    return render(request, "questions/card.html#dismissed", {"question": question})


@require_safe
@login_required
def detail(request: HtmxHttpRequest, question_id: uuid.UUID) -> HttpResponse:
    """One question: answerable while pending, otherwise what became of it and why."""
    question = access.visible_or_404(request, Question.objects.select_related("answer"), pk=question_id)
    context = {
        "question": question,
        "read_only": not access.of_request(request).may_answer(question.project_id),
        "reattach_minutes": round(settings.HOOKBRIDGE_REATTACH_WINDOW / 60),
        "replies": replies.for_person(request.user),
    }
    return render(request, "questions/detail.html", context)


@require_safe
@login_required
def pending_page(request: HtmxHttpRequest) -> HttpResponse:
    """The queue's next page after the cursor its "more" control carries (questions.queue)."""
    after = queue.decode_cursor(request.GET.get("after", ""))
    if after is None:
        return HttpResponse("after: not a cursor of the queue; reload the page", status=400, content_type="text/plain")
    seen = access.of_request(request)
    return render(request, "questions/card.html#pending-page", {"queue": queue.page(after, seen)})


@require_safe
@login_required
def history(request: HtmxHttpRequest) -> HttpResponse:
    """Past questions, newest first, filtered; ?format=csv or json exports what the filters select."""
    filters = HistoryFilter(request.GET)
    questions = access.of_request(request).visible(filters.questions())
    export = request.GET.get("format")
    if export in ("csv", "json"):
        body = exports.download(questions.select_related("project"), export, "history", request.GET.urlencode())
        response = HttpResponse(body, content_type="text/csv" if export == "csv" else "application/json")
        response["Content-Disposition"] = f'attachment; filename="hookbridge-history.{export}"'
        return response
    page = Paginator(questions, 50).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    searched = filters.cleaned_data.get("q", "") if filters.is_valid() else ""
    context = {"page": page, "filters": filters, "query": query.urlencode(), "searched": searched}
    template = "questions/history.html#history-table" if request.htmx else "questions/history.html"
    return render(request, template, context)


@require_safe
@login_required
def analytics_page(request: HtmxHttpRequest) -> HttpResponse:
    """How long agents wait on people, in the projects this person sees; ?format=csv for the same numbers."""
    form = analytics.AnalyticsForm(request.GET)
    if not form.is_valid():
        problems = "; ".join(f"{name}: {' '.join(str(e) for e in errors)}" for name, errors in form.errors.items())
        return render(request, "questions/analytics.html", {"form": form, "problems": problems}, status=400)
    days: int = form.cleaned_data["days"]
    figures = analytics.report(access.of_request(request).visible(Question.objects.all()), days)
    if request.GET.get("format") == "csv":
        response = HttpResponse(analytics.as_csv(figures), content_type="text/csv")
        response["Content-Disposition"] = f'attachment; filename="hookbridge-analytics-{days}d.csv"'
        return response
    return render(request, "questions/analytics.html", {"form": form, "report": figures, "chart": figures.chart()})


@require_safe
@login_required
def saved_replies(request: HtmxHttpRequest) -> HttpResponse:
    """A person's saved replies and the ones they used lately: add, save a recent one, delete."""
    return _replies_page(request, replies.SavedReplyForm(user=request.user))


def _replies_page(request: HtmxHttpRequest, form: replies.SavedReplyForm, status: int = 200) -> HttpResponse:
    context = {
        "form": form,
        "saved": SavedReply.objects.filter(user=form.user),
        "recent": replies.for_person(request.user)["recent"],
    }
    template = "questions/replies.html#reply-lists" if request.htmx else "questions/replies.html"
    return render(request, template, context, status=status)


@require_POST
@login_required
def save_reply(request: HtmxHttpRequest) -> HttpResponse:
    form = replies.SavedReplyForm(request.POST, user=request.user)
    if not form.is_valid():
        return _replies_page(request, form, status=422)
    form.save()
    return _replies_page(request, replies.SavedReplyForm(user=request.user))


@require_POST
@login_required
def delete_reply(request: HtmxHttpRequest, reply_id: int) -> HttpResponse:
    # Only one's own: another person's reply id is a 404, as if it did not exist.
    get_object_or_404(SavedReply, pk=reply_id, user=request.user).delete()
    return _replies_page(request, replies.SavedReplyForm(user=request.user))
