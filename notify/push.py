"""Web Push: a question on the phone or desktop of each person who may answer it, in the browsers they chose.

A person turns push on in a browser (notify.push_views); the browser's push service gives it an endpoint and
the keys its payloads are encrypted with (RFC 8291), and the server keeps them (PushSubscription). A `push`
step sends each subscription of the people who may answer the question's project a notification, signed with
the server's VAPID key (RFC 8292, pywebpush): the question and, for an approval, Allow and Deny, otherwise
Open. An action is a POST of a signed token the notification carries, spent once (notify.push_views.act); the
question ended, a second push with the same tag replaces the notification with its outcome.

Only endpoints on HOOKBRIDGE_PUSH_SERVICES are taken: an endpoint is a URL the server will post to, and any
other would let whoever can sign in make it post anywhere. A subscription its service says is gone (404, 410)
is removed.
"""

from __future__ import annotations

import base64
import json
import logging
import re
import uuid
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from django.conf import settings
from django.core import signing
from django.db import models
from django.urls import reverse

from core import local_secret, presence
from core.errors import Refused
from notify import runtime
from notify.models import PushSubscription
from notify.sending import Failed
from projects.models import Role
from questions.models import Question

if TYPE_CHECKING:
    from py_vapid import Vapid02

logger = logging.getLogger(__name__)

SALT = "hookbridge.notify.push-action"
TIMEOUT_SECONDS = 10.0
# How long a push service keeps a notification for a browser that is offline: a question is worth little
# later than this, and its outcome replaces it anyway.
TTL_SECONDS = 3600
BODY_LIMIT = 300  # a notification shows a few lines; the rest is on the question's page
TITLE_LIMIT = 100  # and one line of title; a push service takes 4 KB of payload in all
# What a push service's answer means for the subscription: gone for good (the browser unsubscribed, the
# endpoint expired) or a payload it will never take.
GONE = {404, 410}
# A redirect is never followed (_no_redirects), and following it later would be no safer: permanent too.
REDIRECTS = {301, 302, 303, 307, 308}
PERMANENT = {400, 401, 403, 413} | GONE | REDIRECTS


def vapid() -> Vapid02:
    """The server's VAPID key: the setting's, else the data folder's (generated there once), read once per process."""
    if runtime.vapid is None:
        runtime.vapid = _load_vapid()
    return runtime.vapid


def _load_vapid() -> Vapid02:
    # Imported here, not at the top: every process loads this module with the app, and pywebpush (aiohttp,
    # requests) added a quarter of a second to each start, the stdio server's included; only a push needs it.
    from py_vapid import Vapid02

    given = settings.HOOKBRIDGE_VAPID_PRIVATE_KEY.strip()
    if given.startswith("-----BEGIN"):
        # A PEM in one environment line has its line breaks written as \n.
        return Vapid02.from_pem(given.replace("\\n", "\n").encode())
    if given:
        return Vapid02.from_string(given)  # the raw key, or its DER, in base64url (what `vapid --gen` prints)
    path = settings.HOOKBRIDGE_VAPID_KEY_FILE
    if local_secret.read(path) is None:
        fresh = Vapid02()
        fresh.generate_keys()
        # O_EXCL: of two processes starting at once one writes, and both then use what is in the file.
        local_secret.save(path, fresh.private_pem().decode())
    kept = local_secret.read(path)
    assert kept is not None
    return Vapid02.from_pem(kept.encode())


def application_server_key() -> str:
    """The public key a browser subscribes with (pushManager.subscribe's applicationServerKey), base64url."""
    from cryptography.hazmat.primitives import serialization  # as in _load_vapid: not at every start

    raw = vapid().public_key.public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def subject() -> str:
    """Whom a push service may write to about this server's pushes: mailto: or https: (RFC 8292)."""
    if settings.HOOKBRIDGE_VAPID_SUBJECT:
        return str(settings.HOOKBRIDGE_VAPID_SUBJECT)
    public = presence.public_url()
    return public if public.startswith("https://") else f"mailto:{settings.HOOKBRIDGE_EMAIL_FROM}"


def allowed(endpoint: str) -> bool:
    """Whether `endpoint` is on a push service HOOKBRIDGE_PUSH_SERVICES lists.

    An entry is a host (https only), "*.host" (its subdomains, https only), or a whole origin
    (scheme://host[:port]), which is how a test's own push service on 127.0.0.1 is named.
    """
    try:
        parts = urlsplit(endpoint)
        port = parts.port
    except ValueError:
        return False
    host = (parts.hostname or "").lower()
    if not host or parts.username or parts.password:
        return False
    origin = f"{parts.scheme}://{host}" + (f":{port}" if port else "")
    for entry in (entry.strip().lower().rstrip("/") for entry in settings.HOOKBRIDGE_PUSH_SERVICES):
        if "://" in entry:
            if origin == entry:
                return True
        elif parts.scheme == "https" and port in (None, 443) and (host == entry or _under(host, entry)):
            return True
    return False


def _under(host: str, entry: str) -> bool:
    return entry.startswith("*.") and host.endswith(entry[1:])


# (what a User-Agent says, what a person calls it), first match wins: Edge and Chrome on iOS also say Safari.
BROWSERS = (("Edg", "Edge"), ("Firefox", "Firefox"), ("FxiOS", "Firefox"), ("CriOS", "Chrome"),
            ("Chrome", "Chrome"), ("Safari", "Safari"))  # fmt: skip
SYSTEMS = (("iPhone", "an iPhone"), ("iPad", "an iPad"), ("Android", "Android"), ("Mac OS X", "a Mac"),
           ("Windows", "Windows"), ("Linux", "Linux"))  # fmt: skip


def device_name(user_agent: str) -> str:
    """A browser as a person would name it on a list of their own ("Firefox on Android"); "" when unknown."""
    browser = next((name for mark, name in BROWSERS if mark in user_agent), "")
    system = next((name for mark, name in SYSTEMS if mark in user_agent), "")
    if browser and system:
        return f"{browser} on {system}"
    return browser or system


def service_of(endpoint: str) -> str:
    return urlsplit(endpoint).netloc


def subscriptions_for(project_id: int | None) -> models.QuerySet[PushSubscription]:
    """The subscriptions of the people who may answer in the project (answerers, its admins, superusers)."""
    answering = models.Q(user__is_superuser=True)
    if project_id is not None:
        answering |= models.Q(
            user__memberships__project_id=project_id,
            user__memberships__role__in=[Role.ANSWERER.value, Role.ADMIN.value],
        )
    return PushSubscription.objects.filter(answering, user__is_active=True).distinct().order_by("pk")


def any_subscription() -> bool:
    return PushSubscription.objects.exists()


LABELLED = re.compile(r"\(#(\d+)\)$")


def subscription_of(target: str) -> int | None:
    """The subscription a push step's target names (PushSubscription.label)."""
    found = LABELLED.search(target)
    return int(found[1]) if found else None


def action_token(delivery_id: int) -> str:
    """What a notification's Allow, Deny or Open sends back: its delivery, signed; spent at its first use."""
    return signing.dumps({"d": delivery_id, "n": uuid.uuid4().hex[:12]}, salt=SALT, compress=True)


def read_action_token(value: str) -> int:
    """The delivery a token names; Refused (404 tampered, 410 expired) when it does not hold."""
    try:
        data = signing.loads(value, salt=SALT, max_age=settings.HOOKBRIDGE_LINK_MAX_AGE)
    except signing.SignatureExpired:
        raise Refused("token: this notification has expired; answer on the dashboard", 410) from None
    except signing.BadSignature:
        raise Refused("token: not a notification of this server", 404) from None
    try:
        return int(data["d"])
    except (KeyError, TypeError, ValueError):
        raise Refused("token: not a notification of this server", 404) from None


def _body(text: str, limit: int = BODY_LIMIT) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def notification_tag(question: Question) -> str:
    """One notification per question on a device: the dashboard tab's own (hookbridge.js's announce, tagged with
    the card's id) and the push replace each other instead of showing twice, and so does the outcome."""
    return f"question-{question.pk}"


def message(question: Question, delivery_id: int) -> dict[str, Any]:
    """The notification a browser shows for a waiting question (read by templates/dashboard/sw.js)."""
    where = f" · {question.session.project_name}" if question.session and question.session.project_name else ""
    if question.kind == "approval":
        actions = [{"action": "allow", "title": "Allow"}, {"action": "deny", "title": "Deny"}]
    else:
        actions = [{"action": "open", "title": "Open"}]
    return {
        "tag": notification_tag(question),
        "title": _body(f"{question.asker_name} asks{where}", TITLE_LIMIT),
        "body": _body(str(question.payload.get("title") or question.text)) or "(no text)",
        "url": reverse("questions:detail", args=[question.pk]),
        "actions": actions,
        "token": action_token(delivery_id),
        "act": reverse("notify:push-act"),
    }


def ended_message(question: Question) -> dict[str, Any]:
    """The notification that replaces a question's once it ended: what became of it, and nothing to press."""
    if question.status == "answered":
        outcome = f"Answered by {question.answer.answered_by}: {question.answer.display}"
    else:
        outcome = question.status_sentence(to_agent=False)
    return {
        "tag": notification_tag(question),
        "title": _body(f"{question.asker_name} asked: {question.short_title}", TITLE_LIMIT),
        "body": _body(outcome),
        "url": reverse("questions:detail", args=[question.pk]),
        "actions": [],
        "ended": True,
    }


def _no_redirects() -> Any:
    """A session that never follows a redirect: a push service answering 3xx is a failed delivery, recorded, and
    the push (its encrypted body and VAPID token) is never re-posted to wherever the answer points."""
    import requests

    class NoRedirects(requests.Session):
        def request(self, *args: Any, **kwargs: Any) -> Any:
            kwargs["allow_redirects"] = False
            return super().request(*args, **kwargs)

    return NoRedirects()


def send(subscription: PushSubscription, payload: dict[str, Any]) -> None:
    """Encrypt and post `payload` to the subscription's push service; Failed, `permanent` when no retry mends it."""
    from pywebpush import WebPushException, webpush  # at the first push, not at every start (see _load_vapid)

    claims: dict[str, str | int] = {"sub": subject()}
    try:
        webpush(
            subscription.info(), json.dumps(payload), vapid_private_key=vapid(), vapid_claims=claims,
            timeout=TIMEOUT_SECONDS, ttl=TTL_SECONDS, headers={"Urgency": "high"}, requests_session=_no_redirects(),
        )  # fmt: skip
    except WebPushException as exc:
        status = exc.response.status_code if exc.response is not None else None
        said = f"{service_of(subscription.endpoint)} answered {status}" if status else f"no answer: {exc.message}"
        raise Failed(said, permanent=status in PERMANENT, gone=status in GONE) from None
    except OSError as exc:  # requests' connection errors and timeouts are OSErrors
        raise Failed(f"{service_of(subscription.endpoint)} could not be reached: {exc}", permanent=False) from None
