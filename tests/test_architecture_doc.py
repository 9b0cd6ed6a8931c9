"""docs/architecture.md matches the code: every dotted name it cites exists, each step of each walk (issue 28)."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parent.parent / "docs" / "architecture.md"
PACKAGES = ("hookbridge_site", "core", "tokens", "lifecycle", "hooks", "questions", "claudecode", "dashboard", "mcpapi")
DOTTED = re.compile(rf"`((?:{'|'.join(PACKAGES)})(?:\.\w+)+)`")


def cited() -> list[str]:
    return sorted(set(DOTTED.findall(DOC.read_text())))


def resolve(dotted: str) -> object:
    """The object a dotted name names: the longest prefix that imports as a module, then attributes."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attribute in parts[cut:]:
            found = getattr(found, attribute)
        return found
    raise ModuleNotFoundError(dotted)


def test_the_document_cites_the_walks_steps() -> None:
    names = cited()
    assert len(names) > 60
    for step in ("questions.asking.ask_and_wait", "claudecode.policy.decide_by_rule", "mcpapi.http.MCPRouter.__call__"):
        assert step in names


@pytest.mark.parametrize("dotted", cited())
def test_every_dotted_name_it_cites_exists(dotted: str) -> None:
    try:
        resolve(dotted)
    except (ImportError, AttributeError) as exc:
        pytest.fail(f"docs/architecture.md cites `{dotted}`, which does not exist: {exc}")


def test_it_would_see_a_name_that_is_gone() -> None:
    with pytest.raises(AttributeError):
        resolve("questions.asking.wait_for_everything")
    with pytest.raises(AttributeError):
        resolve("questions.waiting.wait_for_resolution")  # the module the wait lived in before issue 28
