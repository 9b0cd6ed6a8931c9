"""Markdown from agents, rendered to HTML that is safe to put in a page.

markdown-it leaves raw HTML escaped and refuses javascript: links; nh3 then
cleans the output anyway, so a renderer change can never let a script through.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from typing import Any

import nh3
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict

_md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}).enable("table")


def _image(renderer: Any, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    """An image from this server stays an image; any other becomes a link showing its address.

    Loading it would tell its owner who looks at the question and when, and would let an
    agent make every viewer's browser send requests wherever it likes.
    """
    token = tokens[idx]
    src = str(token.attrGet("src") or "")
    # markdown-it has percent-encoded the address: "/\\host" is a path here, never another host.
    if src.startswith("/") and not src.startswith("//"):
        return str(renderer.image(tokens, idx, options, env))
    alt = renderer.renderInlineAsText(token.children or [], options, env)
    label = escapeHtml(f"Image: {alt} ({src})" if alt else f"Image ({src})")
    opened = sum(1 if t.type == "link_open" else -1 if t.type == "link_close" else 0 for t in tokens[:idx])
    # Inside a link already (a linked badge): the text alone, as links do not nest.
    return label if opened > 0 else f'<a href="{escapeHtml(src)}">{label}</a>'


_md.add_render_rule("image", _image)

_ALLOWED_TAGS = {
    "a", "blockquote", "br", "code", "em", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "li", "ol",
    "p", "pre", "strong", "table", "tbody", "td", "th", "thead", "tr", "ul", "del", "img",
}  # fmt: skip
_ALLOWED_ATTRIBUTES = {"a": {"href", "title"}, "img": {"src", "alt", "title"}, "code": {"class"}}


def render_markdown(text: str) -> SafeString:
    html = _md.render(text or "")
    cleaned = nh3.clean(
        html,
        tags=_ALLOWED_TAGS,
        attributes=_ALLOWED_ATTRIBUTES,
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer nofollow",
        # A code block scrolls sideways rather than widen the page: focusable, so a keyboard scrolls it too
        # (axe's scrollable-region-focusable).
        set_tag_attribute_values={"pre": {"tabindex": "0"}},
    )
    return mark_safe(cleaned)


def plain_text(text: str) -> str:
    """Markdown as the words a person reads, for titles, lists, toasts and the admin: `Which **Python**?`
    reads "Which Python?". Rendered first, so markup is read as markdown reads it, then every tag dropped."""
    words = nh3.clean(_md.render(text or ""), tags=set())
    return re.sub(r"\s+", " ", html.unescape(words)).strip()


def plain_lines(text: str) -> str:
    """Each line's markdown as plain words, the lines kept: an answer of several lines (a rating per hypothesis)
    reads as it was given, without its `**` and backticks (issue 39)."""
    return "\n".join(plain_text(line) for line in (text or "").splitlines() if line.strip())


def first_line_plain(text: str, limit: int) -> str:
    """The first line of the text, as plain words, cut at `limit` characters."""
    lines = [line for line in (text or "").strip().splitlines() if line.strip()]
    first = plain_text(lines[0]) if lines else ""
    return first if len(first) <= limit else first[: limit - 1] + "…"
