"""Slack-compatible webhook posts for new questions, in the background.

A slow or failing receiver never delays or breaks a tool call: the post runs in
a daemon thread of its own, with a timeout and a few retries, and failures are
only logged.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import urllib.request
from typing import Any

from django.conf import settings
from django.dispatch import receiver

from core import presence
from questions import signals
from questions.models import Question

logger = logging.getLogger(__name__)

ATTEMPTS = 3
TIMEOUT_SECONDS = 5.0


def message(question: Question) -> dict[str, str]:
    text = str(question.payload.get("title") or question.text)
    if len(text) > 500:
        text = text[:500] + "…"
    link = f"{presence.public_url()}/questions/{question.pk}/"
    return {"text": f"*{question.asker_name}* asks: {text}\nAnswer it here: {link}"}


def _post(url: str, body: bytes, question_id: str) -> None:
    for attempt in range(1, ATTEMPTS + 1):
        try:
            request = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
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
