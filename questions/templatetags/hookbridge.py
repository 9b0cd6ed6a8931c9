from __future__ import annotations

import re
from typing import Any

from django import template
from django.conf import settings
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from questions import links
from questions.markdown import plain_lines, plain_text, render_markdown

register = template.Library()


@register.filter(name="markdown")
def markdown_filter(text: str) -> SafeString:
    return render_markdown(text)


@register.filter(name="plain")
def plain_filter(text: str) -> str:
    """{{ question.text|plain|truncatechars:300 }}: markdown as plain words, for lists (autoescaped as any text)."""
    return plain_text(text)


@register.filter(name="plain_lines")
def plain_lines_filter(text: str) -> str:
    """{{ answer.display|plain_lines|linebreaksbr }}: markdown as plain words, line by line (autoescaped)."""
    return plain_lines(text)


@register.filter(name="highlight")
def highlight_filter(text: str, words: str | None) -> SafeString:
    """{{ text|highlight:query }}: the text escaped, each match of the search (case-insensitive) in <mark>.

    Matched on the text itself, then each piece escaped: a search for "amp" never cuts into an "&amp;".
    """
    text = str(text)
    if not words:
        return escape(text)
    pieces, start = [], 0
    for found in re.finditer(re.escape(words), text, re.IGNORECASE):
        pieces += [escape(text[start : found.start()]), f"<mark>{escape(found.group(0))}</mark>"]
        start = found.end()
    pieces.append(escape(text[start:]))
    return mark_safe("".join(pieces))


@register.simple_tag
def image_limits() -> dict[str, int]:
    """{% image_limits as limits %}: how many images an answer takes, and how large (questions.images)."""
    largest = settings.HOOKBRIDGE_MAX_IMAGE_BYTES
    return {"count": settings.HOOKBRIDGE_MAX_IMAGES, "bytes": largest, "megabytes": round(largest / 1024 / 1024)}


@register.simple_tag
def question_link(question: Any, recipient: str = "") -> str:
    """{% question_link question %}: a signed link that opens this one question anywhere (questions.links)."""
    return links.url(question.pk, recipient)
