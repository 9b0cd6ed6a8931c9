"""The README is a front door and the docs hold the rest: every setting documented, every relative link whole."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCUMENTS = [README, *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)|!\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", flags=re.MULTILINE | re.DOTALL)


def settings_read_from_the_environment(text: str) -> set[str]:
    """Each HOOKBRIDGE_* variable settings.py reads (env_int("HOOKBRIDGE_X", …) and the like)."""
    return set(re.findall(r"\w+\(\s*\"(HOOKBRIDGE_[A-Z0-9_]+)\"", text))


def slug(heading: str) -> str:
    """A heading's anchor as GitHub makes it."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(document: Path) -> set[str]:
    text = FENCE.sub("", document.read_text())
    return {slug(heading) for heading in re.findall(r"^#+ (.+)$", text, flags=re.MULTILINE)}


def broken_links(document: Path) -> list[str]:
    broken = []
    for match in LINK.finditer(FENCE.sub("", document.read_text())):
        target = match.group(1) or match.group(2)
        if re.match(r"[a-z]+:", target):
            continue  # http(s), mailto: not ours to check offline
        path, _, anchor = target.partition("#")
        resolved = (document.parent / path).resolve() if path else document
        if not resolved.exists():
            broken.append(f"{target}: no {resolved.relative_to(ROOT) if resolved.is_relative_to(ROOT) else resolved}")
        elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
            broken.append(f"{target}: no heading #{anchor} in {resolved.name}")
    return broken


def test_every_setting_read_from_the_environment_is_in_configuration_md() -> None:
    names = settings_read_from_the_environment((ROOT / "hookbridge_site" / "settings.py").read_text())
    assert len(names) > 50, "the search finds the settings where they are read"
    documented = (ROOT / "docs" / "configuration.md").read_text()
    assert sorted(name for name in names if f"`{name}`" not in documented) == []


def test_it_would_see_a_setting_nobody_documented() -> None:
    read = settings_read_from_the_environment('X = env_int("HOOKBRIDGE_NOBODY_KNOWS", 3)')
    assert read == {"HOOKBRIDGE_NOBODY_KNOWS"}
    assert "`HOOKBRIDGE_NOBODY_KNOWS`" not in (ROOT / "docs" / "configuration.md").read_text()


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda path: path.name)
def test_every_relative_link_and_its_anchor_resolve(document: Path) -> None:
    assert broken_links(document) == []


def test_the_link_check_would_see_a_missing_file_and_a_missing_heading(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("# Here\n\n[fine](#here) [gone](nowhere.md) [no such](#there) [web](https://example.com)\n")
    assert [problem.split(":")[0] for problem in broken_links(page)] == ["nowhere.md", "#there"]


def test_the_readme_is_a_front_door_of_at_most_150_lines_pointing_into_every_doc() -> None:
    text = README.read_text()
    assert len(text.splitlines()) <= 150
    for document in DOCUMENTS[1:]:
        assert f"docs/{document.name}" in text, f"the README does not point to {document.name}"
    assert "make serve" in text, "the quick start's first command"
    assert "make test" in text, "the quick start's second command"
