"""What rendered HTML must never hold."""

from __future__ import annotations

from html.parser import HTMLParser


class TagCollector(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))


def assert_inert(html: str) -> None:
    collector = TagCollector()
    collector.feed(html)
    for tag, attrs in collector.tags:
        assert tag not in {"script", "iframe", "object", "embed", "style"}, tag
        for name, value in attrs:
            assert not name.startswith("on"), (tag, name)
            assert not (value or "").strip().lower().startswith(("javascript:", "data:", "vbscript:")), (
                tag,
                value,
            )
