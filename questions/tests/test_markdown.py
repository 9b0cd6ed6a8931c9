"""Markdown from agents renders, and nothing in it can run."""

from __future__ import annotations

import pytest

from questions.markdown import first_line_plain, plain_text, render_markdown
from testing.html import TagCollector, assert_inert


@pytest.mark.parametrize(
    "text",
    [
        "<script>alert(1)</script>",
        "[click](javascript:alert(1))",
        "[click](JaVaScRiPt:alert(1))",
        "<img src=x onerror=alert(1)>",
        '<a href="javascript:alert(1)">x</a>',
        "![x](javascript:alert(1))",
        "<iframe src=//evil.example></iframe>",
        "[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    ],
)
def test_it_renders_hostile_markdown_inert(text: str) -> None:
    assert_inert(render_markdown(text))


def test_it_renders_ordinary_markdown() -> None:
    html = render_markdown("# Title\n\n**bold** `code` [docs](https://example.com)\n\n- one\n- two")
    assert "<h1>Title</h1>" in html
    assert "<strong>bold</strong>" in html
    assert "<code>code</code>" in html
    assert 'href="https://example.com"' in html
    assert 'rel="noopener noreferrer nofollow"' in html
    assert "<li>one</li>" in html


def test_the_inertness_check_can_fail() -> None:
    with pytest.raises(AssertionError):
        assert_inert("<script>x</script>")


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("![logo](https://tracker.example/p.png?who=me)", "Image: logo (https://tracker.example/p.png?who=me)"),
        ("![](//tracker.example/p.png)", "Image (//tracker.example/p.png)"),
        ("![x](HTTP://10.0.0.1/admin/delete)", "Image: x (HTTP://10.0.0.1/admin/delete)"),
    ],
)
def test_a_remote_image_becomes_a_link_showing_its_address(text: str, shown: str) -> None:
    html = render_markdown(text)
    collector = TagCollector()
    collector.feed(html)
    assert "img" not in [tag for tag, _ in collector.tags]
    assert shown.replace("&", "&amp;") in html


def test_a_linked_remote_image_keeps_one_link_with_the_address_as_its_text() -> None:
    html = render_markdown("[![build](https://ci.example/badge.svg)](https://ci.example/run/7)")
    assert html.count("<a ") == 1
    assert ">Image: build (https://ci.example/badge.svg)</a>" in html


def test_an_image_from_this_server_stays_an_image() -> None:
    assert '<img src="/static/hookbridge.css" alt="chart">' in render_markdown("![chart](/static/hookbridge.css)")
    # A backslash browsers would read as "//": encoded, it stays a path on this server.
    assert '<img src="/%5Cevil.example/p.png" alt="x">' in render_markdown("![x](/\\evil.example/p.png)")


def test_a_title_reads_as_words_not_markup() -> None:
    assert plain_text("Which **Python** for [the job](https://x.example)? `make test`") == (
        "Which Python for the job? make test"
    )
    assert first_line_plain("\n# Deploy *now*?\nmore words", 80) == "Deploy now?"
    assert first_line_plain("word " * 40, 20) == "word word word word…"
    assert plain_text("<script>alert(1)</script> & x") == "<script>alert(1)</script> & x", "text, to be escaped"


def test_a_code_block_can_be_scrolled_by_keyboard() -> None:
    assert str(render_markdown("```\nmake deploy\n```")) == '<pre tabindex="0"><code>make deploy\n</code></pre>\n'
    assert str(render_markdown("`inline`")) == "<p><code>inline</code></p>\n", "only a block scrolls"
