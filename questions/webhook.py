"""Slack-compatible webhook posts for new questions, in the background.

A slow or failing receiver never delays or breaks a tool call: the post runs in
a daemon thread of its own, with a timeout and a few retries, and failures are
only logged. With HOOKBRIDGE_WEBHOOK_SECRET set, each post is signed so its
receiver can tell it came from this server: `X-HookBridge-Signature: sha256=<hex>`,
the HMAC-SHA256 of `<X-HookBridge-Timestamp>.<body>` with the secret (the
timestamp inside the signature, so an old post cannot be replayed as new). The
message links the question's signed page (questions.links), answerable on a phone.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import threading
import time
import urllib.request
from typing import Any

from django.conf import settings
from django.dispatch import receiver

from core import presence
from questions import links, signals
from questions.models import Question

logger = logging.getLogger(__name__)

ATTEMPTS = 3
TIMEOUT_SECONDS = 5.0


def message(question: Question) -> dict[str, str]:
    text = str(question.payload.get("title") or question.text)
    if len(text) > 500:
        text = text[:500] + "…"
    page = f"{presence.public_url()}/questions/{question.pk}/"
    link = links.url(question.pk, "webhook")
    return {
        "text": f"*{question.asker_name}* asks: {text}\nAnswer it here: {link}",
        "questionId": str(question.pk),
        "link": link,
        "dashboardUrl": page,
    }


def signed_headers(body: bytes, secret: str, now: float | None = None) -> dict[str, str]:
    """The headers of a post: its type and, with a secret, its timestamp and signature."""
    headers = {"Content-Type": "application/json"}
    if secret:
        timestamp = str(int(now if now is not None else time.time()))
        digest = hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()
        headers |= {"X-HookBridge-Timestamp": timestamp, "X-HookBridge-Signature": f"sha256={digest}"}
    return headers


def _post(url: str, body: bytes, question_id: str) -> None:
    for attempt in range(1, ATTEMPTS + 1):
        try:
            # Signed at each attempt: a retry carries its own time.
            headers = signed_headers(body, settings.HOOKBRIDGE_WEBHOOK_SECRET)
            request = urllib.request.Request(url, data=body, headers=headers)
            # The URL is the operator's own setting, checked to be http(s) at start-up.
            with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as response:
                if response.status < 300:
                    return
                raise OSError(f"HTTP {response.status}")
        except Exception as exc:
            logger.warning("Webhook for question %s failed (attempt %d of %d): %s", question_id, attempt, ATTEMPTS, exc)
            if attempt < ATTEMPTS:
                time.sleep(2 ** (attempt - 1))
    logger.error("Gave up posting the webhook for question %s", question_id)


@receiver(signals.question_asked)
def question_asked(sender: Any, question: Question, new: bool, **kwargs: Any) -> None:
    if new and settings.HOOKBRIDGE_WEBHOOK_URL:
        notify_new_question(question)


def notify_new_question(question: Question) -> None:
    url = settings.HOOKBRIDGE_WEBHOOK_URL
    if not url:
        return
    body = json.dumps(message(question)).encode()
    threading.Thread(target=_post, args=(url, body, str(question.pk)), name="webhook", daemon=True).start()
