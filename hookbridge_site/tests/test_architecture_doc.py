"""docs/architecture.md matches the code: every dotted name it cites exists, each step of each walk (issue 28)."""

from __future__ import annotations

import importlib
import re
import tomllib
import weakref
from pathlib import Path
from typing import Any

import pytest
from django.apps import apps
from django.contrib.auth import get_user_model
from django.db import connection
from django.db.models.signals import ModelSignal, post_delete, post_save, pre_save
from django.dispatch import Signal

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "architecture.md"
# Every app the import-linter contracts cover: a new app is cited here without anyone remembering to.
# The system tests and the benchmarks are not described there; the harness (testing/) is.
PACKAGES = tuple(
    package
    for package in tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["root_packages"]
    if package not in ("tests", "bench")
)
SIGNAL_MODULES = ("questions.signals", "lifecycle.signals", "hooks.signals", "projects.signals", "core.signals")
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
    for step in ("questions.asking.ask_and_wait", "approvals.rules.decide_by_rule", "mcpapi.http.MCPRouter.__call__"):
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


def connected_receivers() -> list[tuple[str, list[str]]]:
    """Each signal our code listens to, as the doc's table names it, with our receivers in the order they run."""
    signals: list[tuple[str, Signal]] = []
    for module_name in SIGNAL_MODULES:
        module = importlib.import_module(module_name)
        signals += [(f"`{module_name}.{name}`", value) for name, value in vars(module).items()
                    if isinstance(value, Signal) and not isinstance(value, ModelSignal)]  # fmt: skip
    senders = {id(model): model.__name__ for model in apps.get_models()}
    senders[id(get_user_model())] = "User"
    found = []
    for label, signal in [*signals, ("pre_save", pre_save), ("post_save", post_save), ("post_delete", post_delete)]:
        by_sender: dict[str, list[str]] = {}
        for (_, sender_key), reference, _is_async in signal.receivers:
            function: Any = reference() if isinstance(reference, weakref.ReferenceType) else reference
            module_of = str(getattr(function, "__module__", ""))
            if function is None or module_of.split(".")[0] not in PACKAGES:
                continue  # Django's own, and third parties'
            key = f"`{label}` of `{senders.get(sender_key, '?')}`" if isinstance(signal, ModelSignal) else label
            by_sender.setdefault(key, []).append(f"{module_of}.{function.__qualname__}")
        found += sorted(by_sender.items())
    return found


def documented_receivers() -> list[tuple[str, list[str]]]:
    section = DOC.read_text().split("| signal | receivers, in the order they run |")[1].split("\n\n")[0]
    rows = [line.strip("|").split("|") for line in section.strip().splitlines()[1:]]
    return [(signal.strip(), re.findall(r"`([\w.]+)`", receivers)) for signal, receivers in rows]


def test_every_receiver_the_doc_lists_is_connected_to_its_signal_in_that_order_and_none_is_missing() -> None:
    assert documented_receivers() == connected_receivers()


def test_the_waiting_call_hears_an_answer_before_any_page_is_rendered() -> None:
    resolved = dict(connected_receivers())["`questions.signals.question_resolved`"]
    assert resolved[0] == "questions.wakeups.wake_the_waiting_calls"


def test_every_app_has_its_row_in_the_table_of_what_each_app_owns() -> None:
    table = DOC.read_text().split("## What each app owns")[1].split("\n## ")[0]
    rows = set(re.findall(r"^\| `(\w+)`", table, flags=re.MULTILINE))
    assert rows == set(PACKAGES)


@pytest.mark.django_db
def test_every_table_the_doc_names_exists() -> None:
    named = re.findall(r"tables? `(\w+?)(…?)`", DOC.read_text())
    assert len(named) >= 3
    tables = connection.introspection.table_names()
    for table, ellipsis in named:
        assert any(t.startswith(table) for t in tables) if ellipsis else table in tables, table
