"""The tool sets: each module exports one typed Toolset, and the server reads nothing else of it."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mcpapi import toolset_names, toolsets
from mcpapi.toolsets.entries import ToolEntry, Toolset
from testing.live import ROOT


@pytest.mark.parametrize("name", list(toolsets.TOOLSETS))
def test_each_set_is_one_typed_toolset_named_as_its_module(name: str) -> None:
    module = importlib.import_module(f"mcpapi.toolsets.{name}")
    assert isinstance(module.TOOLSET, Toolset)
    assert module.TOOLSET.name == name
    for old in ("TOOLS", "PROMPTS", "ASKS", "INSTRUCTIONS", "SERVER_NAME"):
        assert not hasattr(module, old), f"{name}.{old}: the Toolset says it"


def test_the_fixed_sets_name_their_tools_and_the_hooks_set_finds_its_own() -> None:
    assert [e.name for e in toolsets.TOOLSETS["clifford"].entries()] == ["request_help"]
    assert toolsets.TOOLSETS["maxsim"].fixed
    assert not toolsets.TOOLSETS["hooks"].fixed
    assert "request_help" in toolsets.builtin_tool_names()
    assert all(isinstance(entry, ToolEntry) for entry in toolsets.tools(toolsets.TOOLSETS))


def test_a_single_set_keeps_its_originals_name_and_a_combination_is_hookbridge() -> None:
    assert toolsets.server_name(["clifford"]) == "clifford"
    assert toolsets.server_name(["hooks"]) == "han"
    assert toolsets.server_name(["maxsim"]) == "hookbridge"
    assert toolsets.server_name(["clifford", "askme"]) == "hookbridge"


def test_the_instructions_say_how_to_keep_waiting_in_the_words_the_endpoint_serves() -> None:
    assert "call wait_for_answer" in toolsets.instructions(["maxsim"])
    assert "call the same tool again" in toolsets.instructions(["clifford"])
    assert "keep waiting" not in toolsets.instructions(["progress"])


def test_prompts_are_named() -> None:
    names = [name for name, _ in toolsets.prompts(["askme"])]
    assert names == ["suggest-follow-up-questions", "human-decision", "expert-consultation", "creative-brainstorm"]


def test_the_sets_that_ask_name_their_asking_tools_and_the_others_name_none() -> None:
    for toolset in toolsets.TOOLSETS.values():
        names = {entry.name for entry in toolset.entries()}
        assert toolset.asking <= names, toolset.name
        # approvals, askme, clifford and maxsim put questions; progress and hooks report and run scripts.
        assert bool(toolset.asking) == (toolset.name in {"approvals", "askme", "clifford", "maxsim"}), toolset.name
    assert toolsets.asking_tool_names(("maxsim", "progress")) == {"ask_question"}
    assert "wait_for_answer" not in toolsets.asking_tool_names(toolsets.TOOLSETS)


def test_the_names_read_at_start_up_are_the_sets_in_their_order() -> None:
    assert tuple(toolsets.TOOLSETS) == toolset_names.NAMES


def test_a_command_that_serves_no_mcp_starts_without_loading_the_mcp_sdk(tmp_path: Path) -> None:
    # The SDK is 0.6 s of a 1.3 s start; `manage.py createsuperuser`, `register_claude` and the like never use it.
    code = (
        "import django, sys; django.setup();"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('mcp', 'mcp_types')))"
    )
    env = {key: value for key, value in os.environ.items() if not key.startswith(("HOOKBRIDGE_", "DATABASE_URL"))}
    env.update(DJANGO_SETTINGS_MODULE="hookbridge_site.settings", HOOKBRIDGE_DATA_DIR=str(tmp_path))
    started = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True)
    assert started.returncode == 0, started.stderr
    assert started.stdout.strip() == "[]"


def test_the_instructions_say_asks_block_only_when_no_question_can_come_back_as_a_task() -> None:
    """Issue 55, point 12: in task mode the server told agents ask_question blocks, and it returned a task."""
    off = toolsets.instructions(["maxsim", "askme", "clifford"], "off")
    assert "ask_question blocks until a person" in off
    assert "choose-next block until" in off
    assert "request_help asks a person on your team and blocks until" in off
    assert "tasks/get" not in off
    for mode in ("auto", "allowed"):
        said = toolsets.instructions(["maxsim", "askme", "clifford"], mode)
        assert "block until" not in said, mode
        assert "blocks until" not in said, mode
        assert "ask_question waits until a person" in said
        assert "poll tasks/get" in said
    assert "comes back at once as a task" in toolsets.instructions(["maxsim"], "auto")
    assert "Pass background: true" in toolsets.instructions(["maxsim"], "allowed")
    # Approvals never go to the background, so an endpoint of approvals alone says nothing of tasks.
    assert "tasks/get" not in toolsets.instructions(["approvals"], "auto")
