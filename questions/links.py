"""Signed one-question links: a question reaches a person where they are (a phone, a mail, a chat), answerable there.

A link names one question and the person it was sent to, signed with the server's key (Django's signing, the
same primitive as its password-reset links) and dated: it expires after HOOKBRIDGE_LINK_MAX_AGE seconds and
stops working once the question is resolved. By default the link alone lets its holder answer that one
question; HOOKBRIDGE_LINKS_NEED_LOGIN=1 asks for a login first. A GET never answers (mail scanners and chat
unfurlers open links): answering is a POST from the link's page.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from urllib.parse import urlencode

from django.conf import settings
from django.core import signing

from core import presence
from core.errors import Refused

SALT = "hookbridge.questions.link"


@dataclass(frozen=True)
class Link:
    question_id: uuid.UUID
    recipient: str  # who it was sent to ("" for a link copied from the dashboard)


def token(question_id: uuid.UUID, recipient: str = "") -> str:
    return signing.dumps({"q": str(question_id), "to": recipient}, salt=SALT, compress=True)


def url(question_id: uuid.UUID, recipient: str = "", *, option: str = "") -> str:
    """The link, at the address people reach this server on; `option` preselects a choice (never sends it)."""
    query = f"?{urlencode({'option': option})}" if option else ""
    return f"{presence.public_url()}/q/{token(question_id, recipient)}/{query}"


def read(value: str) -> Link:
    """The link a token stands for, or Refused, whose message is why: "tampered" (404) or "expired" (410)."""
    try:
        data = signing.loads(value, salt=SALT, max_age=settings.HOOKBRIDGE_LINK_MAX_AGE)
    except signing.SignatureExpired:
        raise Refused("expired", 410) from None
    except signing.BadSignature:
        raise Refused("tampered", 404) from None
    try:
        return Link(uuid.UUID(str(data["q"])), str(data.get("to", "")))
    except (KeyError, TypeError, ValueError):
        raise Refused("tampered", 404) from None


def answered_by(link: Link) -> str:
    """How the answer's author is recorded: the recipient the link was sent to, and that it came by link."""
    return f"{link.recipient} (via link)" if link.recipient else "someone with the link (via link)"
