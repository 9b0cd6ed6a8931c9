"""A signed one-question link's page (questions.links): that question alone, answerable by its holder.

Mobile first, and nothing else of the server: no navigation to other questions, no live socket, no list.
A tampered or expired link, or one whose question is resolved, gets a page saying so and no form (4xx).
The GET shows; only the page's POST answers.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_POST, require_safe

from core.errors import Refused
from notify import steps
from projects import access
from questions import images, links
from questions.kinds import InvalidAnswer
from questions.models import AlreadyResolved, NotDecided, Question, VoteCounted
from tokens.auth import client_address

# Over-long or strange query values are not worth a 500: a preselection is only ever one short value.
PRESET_FIELDS = ("option", "choice", "behavior")


def _refused(request: HttpRequest, reason: str, question: Question | None = None) -> HttpResponse:
    status = {"tampered": 404, "expired": 410, "resolved": 410, "gone": 404}[reason]
    hours = round(settings.HOOKBRIDGE_LINK_MAX_AGE / 3600)
    context = {"refused": reason, "question": question, "max_age_hours": hours}
    return render(request, "notify/link.html", context, status=status)


def _open(request: HttpRequest, token: str) -> tuple[links.Link, Question] | HttpResponse:
    """The link and its pending question, or the page to send instead."""
    try:
        link = links.read(token)
    except Refused as refused:
        return _refused(request, refused.message)
    question = Question.objects.select_related("answer", "session").filter(pk=link.question_id).first()
    if question is None:
        return _refused(request, "gone")
    if settings.HOOKBRIDGE_LINKS_NEED_LOGIN and not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    if settings.HOOKBRIDGE_LINKS_NEED_LOGIN:
        # Signed in for it, the person must answer in the question's project (issue 31); else as if there were none.
        access.require(request, question.project_id)
    if not question.is_pending:
        return _refused(request, "resolved", question)
    return link, question


def _page(request: HttpRequest, token: str, question: Question, form: object, **extra: object) -> HttpResponse:
    context = {"question": question, "form": form, "token": token, "next_steps": steps.line(question.pk), **extra}
    refused_answer = bool(extra) or bool(getattr(form, "is_bound", False))
    return render(request, "notify/link.html", context, status=422 if refused_answer else 200)


@require_safe
def link_page(request: HttpRequest, token: str) -> HttpResponse:
    opened = _open(request, token)
    if isinstance(opened, HttpResponse):
        return opened
    _, question = opened
    preset = {name: request.GET[name][:200] for name in PRESET_FIELDS if name in request.GET}
    return _page(request, token, question, question.kind_spec.form(question, preset=preset))


@require_POST
def link_answer(request: HttpRequest, token: str) -> HttpResponse:
    opened = _open(request, token)
    if isinstance(opened, HttpResponse):
        return opened
    link, question = opened
    form = question.kind_spec.form(question, request.POST)
    if not form.is_valid() or form.reply is None:
        return _page(request, token, question, form)
    who = request.user.get_username() if request.user.is_authenticated else ""
    by_name = f"{who} (via link)" if who else links.answered_by(link)
    try:
        given = images.from_uploads(request.FILES.getlist("images"))
        question.record_answer(
            reply=form.reply, by_name=by_name, by_user=request.user, source="link",
            remote_addr=client_address(request), images=given,
        )  # fmt: skip
    except NotDecided as exc:
        # Counted and waiting for more people, or refused by the approval's policy: the page says which.
        refused = not isinstance(exc, VoteCounted)
        return _page(request, token, question, form, vote_notice=str(exc), vote_refused=refused)
    except InvalidAnswer as exc:
        return _page(request, token, question, form, image_error=str(exc))
    except AlreadyResolved as exc:
        return _refused(request, "resolved", exc.question)
    return render(request, "notify/link.html", {"sent": True, "question": question})
