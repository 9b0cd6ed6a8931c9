"""The generic webhook (HOOKBRIDGE_WEBHOOK_URL): a Slack-compatible post, signed for its receiver.

With HOOKBRIDGE_WEBHOOK_SECRET set each post says it is this server's: `X-HookBridge-Signature:
sha256=<hex>` is the HMAC-SHA256 of `<X-HookBridge-Timestamp>.<body>` with the secret (the timestamp
inside the signature, so an old post cannot be replayed as new). It carries the question's signed link.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
import urllib.error
import urllib.request
from typing import Any

from django.conf import settings

from core import presence
from notify.sending import Failed
from questions import links
from questions.models import Question

TIMEOUT_SECONDS = 5.0


def configured() -> bool:
    return bool(settings.HOOKBRIDGE_WEBHOOK_URL)


def message(question: Question) -> dict[str, str]:
    text = str(question.payload.get("title") or question.text)
    if len(text) > 500:
        text = text[:500] + "…"
    link = links.url(question.pk, "webhook")
    return {
        "text": f"*{question.asker_name}* asks: {text}\nAnswer it here: {link}",
        "questionId": str(question.pk),
        "link": link,
        "dashboardUrl": f"{presence.public_url()}/questions/{question.pk}/",
    }


def signed_headers(body: bytes, secret: str, now: float | None = None) -> dict[str, str]:
    """The headers of a post: its type and, with a secret, its timestamp and signature."""
    headers = {"Content-Type": "application/json"}
    if secret:
        timestamp = str(int(now if now is not None else time.time()))
        digest = hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()
        headers |= {"X-HookBridge-Timestamp": timestamp, "X-HookBridge-Signature": f"sha256={digest}"}
    return headers


def post(url: str, payload: dict[str, Any], secret: str | None = None) -> None:
    """POST `payload` signed with `secret` (default: HOOKBRIDGE_WEBHOOK_SECRET); Failed says why it did not land."""
    body = json.dumps(payload, ensure_ascii=False).encode()
    secret = settings.HOOKBRIDGE_WEBHOOK_SECRET if secret is None else secret
    # Signed at each attempt: a retry carries its own time.
    request = urllib.request.Request(url, data=body, headers=signed_headers(body, secret))
    try:
        # The URL is the operator's own setting, checked to be http(s) at start-up.
        with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as response:
            if response.status >= 300:
                raise Failed(f"the webhook answered HTTP {response.status}", permanent=False)
    except urllib.error.HTTPError as exc:
        # A 4xx is the receiver refusing this post (except a rate limit): sending it again changes nothing.
        raise Failed(
            f"the webhook answered HTTP {exc.code}", permanent=400 <= exc.code < 500 and exc.code != 429
        ) from None
    except (OSError, TimeoutError) as exc:
        raise Failed(f"the webhook could not be reached: {exc}", permanent=False) from None
