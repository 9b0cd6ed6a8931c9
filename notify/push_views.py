"""Push on a person's browsers (notify.push): turning it on and off, and the buttons of its notifications.

GET /notifications/ lists the browsers where the person turned push on, each removable, and turns it on in
this one. POST /push/subscriptions takes the browser's PushSubscription JSON (as pushManager.subscribe gives
it) for the person signed in; POST /push/act is a notification's Allow or Deny, sent by the service worker
with the signed token the notification carried: it answers as the person it was sent to, once, and only while
they may still answer the question's project. A GET never answers.
"""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST, require_safe

from core import jsonapi
from core.errors import Refused
from notify import discord, forms, push, teams, telegram
from notify.models import LINK_CODE_MINUTES, ChatAccount, Delivery, LinkCode, Platform, Purpose, PushSubscription
from projects import access
from questions.decisions import Decision
from questions.models import AlreadyResolved, NotDecided, VoteCounted
from tokens.auth import client_address

logger = logging.getLogger(__name__)


def _refused(message: str, status: int, field: str | None = None) -> JsonResponse:
    return JsonResponse({"error": message, "field": field}, status=status)


def _first_error(form: forms.Subscription | forms.Action) -> tuple[str, str]:
    name, errors = next(iter(form.errors.items()))
    shown = {"p256dh": "keys.p256dh", "auth": "keys.auth"}.get(name, name)
    return f"{shown}: {errors[0]}", shown


@require_safe
@login_required
def push_page(request: HttpRequest) -> HttpResponse:
    """The person's browsers with push on, and the button that turns it on in this one."""
    context = {
        "subscriptions": PushSubscription.objects.filter(user=request.user),  # type: ignore[misc]  # login_required
        "public_key": push.application_server_key(),
        "may_answer": access.of_user(request.user).may_anywhere("answerer"),
        "chats": chat_rows(request.user),
    }
    return render(request, "notify/push.html", context)


def chat_rows(user: Any) -> list[dict[str, Any]]:
    """Each chat platform set up here: the person's linked account on it, and their code if they just made one."""
    set_up = {
        Platform.TELEGRAM: telegram.configured(), Platform.DISCORD: discord.configured(),
        Platform.TEAMS: teams.configured(),
    }  # fmt: skip
    accounts = {account.platform: account for account in ChatAccount.objects.filter(user=user)}
    codes = {
        code.platform: code for code in LinkCode.objects.filter(user=user, expires_at__gt=timezone.now())
    }  # fmt: skip
    bot = settings.HOOKBRIDGE_TELEGRAM_BOT_USERNAME.lstrip("@")
    rows = []
    for platform in Platform:
        if not set_up.get(platform, False) and platform not in accounts:
            continue
        code = codes.get(platform)
        start = f"https://t.me/{bot}?start={code.code}" if code and bot and platform == Platform.TELEGRAM else ""
        rows.append({"platform": platform, "label": platform.label, "account": accounts.get(platform), "code": code,
                     "start_link": start})  # fmt: skip
    return rows


@require_POST
@login_required
def link_code(request: HttpRequest, platform: str) -> HttpResponse:
    """A new one-time code the person gives the platform's bot to link their account there (their earlier goes)."""
    if platform not in Platform.values:
        return HttpResponse(f"platform: one of {', '.join(Platform.values)}", status=404, content_type="text/plain")
    code = LinkCode.issue(request.user, platform)
    messages.success(request, f"Your {Platform(platform).label} link code is {code.code}, for "
                              f"{LINK_CODE_MINUTES} minutes and once.")  # fmt: skip
    return redirect("notify:push")


@require_POST
@login_required
def unlink(request: HttpRequest, platform: str) -> HttpResponse:
    mine = ChatAccount.objects.filter(user=request.user, platform=platform)  # type: ignore[misc]  # login_required
    gone, _ = mine.delete()
    if gone:
        messages.success(request, f"Your {Platform(platform).label} account is unlinked: its presses answer nothing.")
    return redirect("notify:push")


@require_POST
@login_required
def subscribe(request: HttpRequest) -> JsonResponse:
    """The browser's PushSubscription JSON: {"endpoint": …, "keys": {"p256dh": …, "auth": …}}; 201 once kept."""
    try:
        given = jsonapi.loads(request.body or b"{}")  # bounded: no body nests deep enough to crash the parser
    except jsonapi.BadJSON as exc:
        return _refused(f"the body {exc}: send the browser's PushSubscription as JSON", 400)
    if not isinstance(given, dict):
        return _refused("the body is not a PushSubscription object", 400)
    keys = given["keys"] if isinstance(given.get("keys"), dict) else {}
    data: dict[str, Any] = {
        "endpoint": given.get("endpoint"), "p256dh": keys.get("p256dh"), "auth": keys.get("auth"),
        "device": push.device_name(str(request.headers.get("User-Agent", ""))),
    }  # fmt: skip
    form = forms.Subscription({name: value for name, value in data.items() if isinstance(value, str)})
    if not form.is_valid():
        message, field = _first_error(form)
        return _refused(message, 422, field)
    found = form.cleaned_data
    # One browser, one subscription. Posted again by its person (keys renewed) it is updated; it moves to another
    # person only when the request proves it comes from that browser, which alone holds the subscription's keys
    # (someone signed in there after its person): an endpoint URL alone is no proof, and would take their
    # notifications, with Allow and Deny acting as the taker. Locked, so two posts at once cannot both move it.
    with transaction.atomic():
        held = PushSubscription.objects.select_for_update().filter(endpoint=found["endpoint"]).first()
        if held is not None and held.user_id != request.user.pk and (held.p256dh, held.auth) != (
            found["p256dh"], found["auth"]
        ):  # fmt: skip
            logger.warning("Refused %s's post of another person's push endpoint on %s", request.user, held.service)
            return _refused(
                "endpoint: this browser's notifications belong to another person; only that browser, with its own "
                "keys, can move them (or its person turns them off on their Notifications page)",
                409,
                "endpoint",
            )
        subscription, created = PushSubscription.objects.update_or_create(  # type: ignore[misc]  # login_required
            endpoint=found["endpoint"],
            defaults={"user": request.user, "p256dh": found["p256dh"], "auth": found["auth"],
                      "device": found["device"]},
        )  # fmt: skip
    logger.info("%s push for %s on %s", "Turned on" if created else "Renewed", request.user, subscription.service)
    return JsonResponse(
        {"id": subscription.pk, "service": subscription.service, "created": created}, status=201 if created else 200
    )


@require_POST
@login_required
def unsubscribe(request: HttpRequest, pk: int) -> HttpResponse:
    # Another person's browser is a 404, as if it did not exist.
    subscription = get_object_or_404(PushSubscription, pk=pk, user__pk=request.user.pk)
    subscription.delete()
    where = subscription.device or subscription.service
    messages.success(request, f"Notifications are off on {where}: it is told of nothing more.")
    return redirect("notify:push")


def _act(token: str, action: str, remote_addr: str | None) -> dict[str, Any]:
    """Answer the notification's question as its person; Refused says why not, changing nothing."""
    delivery_id = push.read_action_token(token)
    delivery = (
        Delivery.objects.select_related("push_subscription__user", "question")
        .filter(pk=delivery_id, channel="push", purpose=Purpose.NOTIFY)
        .first()
    )
    if delivery is None:
        raise Refused("token: not a notification of this server", 404, field="token")
    subscription, question = delivery.push_subscription, delivery.question
    if subscription is None:
        raise Refused("Push was turned off on this browser: answer on the dashboard.", 410)
    person = subscription.user
    if not (person.is_active and access.of_user(person).may_answer(question.project_id)):
        raise Refused(f"{person} may not answer this project's questions any more.", 403)
    if question.kind != "approval":
        raise Refused(
            "action: only an approval is decided from its notification; open it to answer", 422, field="action"
        )
    if not question.is_pending:
        raise Refused(f"Already decided: {question.status_sentence(to_agent=False)}", 409)
    if not delivery.spend():
        raise Refused("This notification's button was used already.", 409, field="token")
    decision = Decision.allow() if action == "allow" else Decision.deny(f"Denied from a notification by {person}.")
    try:
        question.record_answer(decision.as_dict(), by_user=person, source="push", remote_addr=remote_addr)
    except AlreadyResolved as exc:
        raise Refused(f"Already decided: {exc.question.status_sentence(to_agent=False)}", 409) from None
    except VoteCounted as exc:
        return {"decided": "counted", "by": person.get_username(), "question": str(question.pk), "message": str(exc)}
    except NotDecided as exc:
        raise Refused(str(exc), exc.status, field=exc.field) from None
    return {"decided": action, "by": person.get_username(), "question": str(question.pk)}


@csrf_exempt  # the signed token, not a cookie, says who acts: a service worker's POST carries it
@require_POST
def act(request: HttpRequest) -> JsonResponse:
    form = forms.Action(request.POST)
    if not form.is_valid():
        message, field = _first_error(form)
        return _refused(message, 422, field)
    try:
        done = _act(form.cleaned_data["token"], form.cleaned_data["action"], client_address(request))
    except Refused as refused:
        logger.warning("Refused a notification's %s: %s", form.cleaned_data["action"], refused.message)
        return _refused(refused.message, refused.status, refused.field)
    return JsonResponse(done)
