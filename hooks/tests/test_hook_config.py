"""Discovering hooks from a plugins folder: names, descriptions, annotations, and configs that are skipped."""

from __future__ import annotations

import json
import logging
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from hooks.config import derived_title, discover, discovered, tool_name
from mcpapi.toolsets import builtin_tool_names
from mcpapi.toolsets import hooks as hooks_toolset
from testing.hook_world import plugin


@pytest.mark.parametrize(
    ("plugin_name", "hook", "name", "title"),
    [
        ("jutsu-typescript", "lint", "jutsu_typescript_lint", "Lint Typescript"),
        ("jutsu-typescript", "type-check", "jutsu_typescript_type_check", "Type Check Typescript"),
        ("my-checks", "test", "my_checks_test", "Test My Checks"),
        ("jutsu", "lint", "jutsu_lint", "Lint Jutsu"),
    ],
)
def test_names_and_titles_come_from_the_plugin_and_hook(plugin_name: str, hook: str, name: str, title: str) -> None:
    assert tool_name(plugin_name, hook) == name
    assert derived_title(plugin_name, hook) == title


def test_it_loads_both_config_locations_in_name_order(tmp_path: Path) -> None:
    plugin(tmp_path, "zeta", {"hooks": {"test": {"command": "make test"}}})
    plugin(tmp_path, "alpha", {"hooks": {"lint": {"command": "make lint"}}}, nested=True)
    plugin(tmp_path, ".hidden", {"hooks": {"x": {"command": "true"}}})
    (tmp_path / "skills-only").mkdir()
    found = discover(tmp_path)
    assert list(found.hooks) == ["alpha_lint", "zeta_test"]
    assert found.errors == []
    assert found.hooks["alpha_lint"].config_path == tmp_path / "alpha" / "hooks" / "han-config.json"
    assert found.hooks["alpha_lint"].plugin_root == tmp_path / "alpha"


def test_the_description_says_what_when_where_and_which_command(tmp_path: Path) -> None:
    hooks = {
        "test": {
            "command": "npm test",
            "dirsWith": ["package.json", "*.csproj"],
            "dirTest": "grep -q jest package.json",
            "triggers": ["run the tests", 'say "go"'],
        }
    }
    plugin(tmp_path, "jutsu-jest", {"hooks": hooks})
    hook = discover(tmp_path).hooks["jutsu_jest_test"]
    assert hook.tool_description() == (
        "Runs the test hook of the jutsu-jest plugin.\n"
        'Triggers: "run the tests", "say \\"go\\"".\n'
        "Runs in directories containing: package.json, *.csproj. Only those where this check succeeds: "
        "grep -q jest package.json\n"
        "Command: npm test"
    )


def test_annotations_default_sensibly_and_the_config_overrides_them(tmp_path: Path) -> None:
    hooks = {
        "lint": {"command": "eslint ."},
        "fix": {
            "command": "eslint --fix .",
            "annotations": {
                "title": "Fix Lint",
                "destructiveHint": True,
                "idempotentHint": False,
                "openWorldHint": True,
            },
        },
    }
    plugin(tmp_path, "jutsu-eslint", {"hooks": hooks})
    found = discover(tmp_path).hooks
    assert found["jutsu_eslint_lint"].annotations.model_dump(by_alias=True) == {
        "title": "Lint Eslint",
        "readOnlyHint": False,
        "destructiveHint": False,
        "idempotentHint": True,
        "openWorldHint": False,
    }
    assert found["jutsu_eslint_fix"].annotations.model_dump(by_alias=True) == {
        "title": "Fix Lint",
        "readOnlyHint": False,
        "destructiveHint": True,
        "idempotentHint": False,
        "openWorldHint": True,
    }
    assert found["jutsu_eslint_fix"].title == "Fix Lint"


def test_timeout_and_concurrency_come_from_the_config_or_the_default(tmp_path: Path) -> None:
    hooks = {"slow": {"command": "sleep 1", "timeout": 30, "maxConcurrent": 2}, "quick": {"command": "true"}}
    plugin(tmp_path, "p", {"hooks": hooks})
    found = discover(tmp_path, default_timeout=600).hooks
    assert (found["p_slow"].timeout, found["p_slow"].max_concurrent) == (30, 2)
    assert (found["p_quick"].timeout, found["p_quick"].max_concurrent) == (600, 1)


def test_hans_own_keys_are_accepted(tmp_path: Path) -> None:
    hooks = {"lint": {"command": "biome check", "ifChanged": ["**/*.ts"], "idleTimeout": 30000}}
    plugin(tmp_path, "jutsu-biome", {"hooks": hooks})
    assert list(discover(tmp_path).hooks) == ["jutsu_biome_lint"]


@pytest.mark.parametrize(
    ("config", "problem"),
    [
        ("{not json", "is not valid JSON"),
        ({"hooks": {"lint": {}}}, "hooks.lint.command: Field required"),
        ({"hooks": {"lint": {"command": ""}}}, "hooks.lint.command: String should have at least 1 character"),
        ({"hooks": {"lint": {"command": 12}}}, "hooks.lint.command: Input should be a valid string"),
        ({"hooks": {"lint": {"command": "x", "dirsWith": "package.json"}}}, "hooks.lint.dirsWith: Input should be"),
        ({"hooks": {"lint": {"command": "x", "dirsWith": ["../package.json"]}}}, "is not a file name"),
        ({"hooks": {"lint": {"command": "x", "timeout": -1}}}, "hooks.lint.timeout: Input should be greater than 0"),
        ({"hooks": {"lint": {"command": "x", "annotations": {"readOnlyHint": "yes"}}}}, "readOnlyHint"),
        ({"hooks": {"bad name": {"command": "x"}}}, "a hook name may hold only"),
        ({}, "hooks: Field required"),
    ],
)
def test_an_invalid_config_is_skipped_and_reported_while_others_load(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, config: Any, problem: str
) -> None:
    bad = plugin(tmp_path, "broken", config)
    plugin(tmp_path, "good", {"hooks": {"lint": {"command": "make lint"}}})
    with caplog.at_level(logging.ERROR, logger="hooks.config"):
        found = discover(tmp_path)
    assert list(found.hooks) == ["good_lint"]
    assert len(found.errors) == 1
    assert found.errors[0].startswith(f"{bad}: ")
    assert problem in found.errors[0]
    assert str(bad) in caplog.text


def test_a_hook_may_not_take_a_built_in_tool_name(tmp_path: Path) -> None:
    plugin(tmp_path, "ask", {"hooks": {"question": {"command": "true"}}})
    found = discover(tmp_path, reserved=builtin_tool_names())
    assert found.hooks == {}
    assert "tool name 'ask_question' is already taken" in found.errors[0]


def test_the_servers_discovery_refuses_a_built_in_tool_name_too(tmp_path: Path, settings: Any) -> None:
    plugin(tmp_path, "ask", {"hooks": {"question": {"command": "true"}}})
    plugin(tmp_path, "jutsu", {"hooks": {"lint": {"command": "true"}}})
    settings.HOOKBRIDGE_PLUGINS_DIR = tmp_path
    settings.HOOKBRIDGE_CLAUDE_PLUGINS = False
    discovered.cache_clear()
    try:
        found = discovered()  # the reserved names as mcpapi's ready() handed them in, read at this first use
    finally:
        discovered.cache_clear()
    assert list(found.hooks) == ["jutsu_lint"], found.errors
    assert "tool name 'ask_question' is already taken" in found.errors[0]


def test_two_plugins_whose_names_meet_do_not_both_load(tmp_path: Path) -> None:
    plugin(tmp_path, "a-b", {"hooks": {"c": {"command": "true"}}})
    plugin(tmp_path, "a", {"hooks": {"b-c": {"command": "true"}}})
    found = discover(tmp_path)
    assert list(found.hooks) == ["a_b_c"]
    assert found.hooks["a_b_c"].plugin == "a"  # "a" sorts first and wins
    assert "'a_b_c' is already taken" in found.errors[0]


def test_no_plugins_folder_means_no_hooks(tmp_path: Path) -> None:
    assert discover(None).hooks == {}


def test_discovery_runs_once_per_process(tmp_path: Path, settings: Any) -> None:
    plugin(tmp_path, "p", {"hooks": {"lint": {"command": "make lint"}}})
    settings.HOOKBRIDGE_PLUGINS_DIR = tmp_path
    discovered.cache_clear()
    try:
        assert list(discovered().hooks) == ["p_lint"]
        plugin(tmp_path, "q", {"hooks": {"test": {"command": "make test"}}})
        assert list(discovered().hooks) == ["p_lint"]  # read once: a restart picks up changes
        assert [entry.name for entry in hooks_toolset.tools()] == ["p_lint"]
    finally:
        discovered.cache_clear()


def test_hooks_list_says_when_no_plugins_folder_is_set(settings: Any) -> None:
    settings.HOOKBRIDGE_PLUGINS_DIR = None
    discovered.cache_clear()
    try:
        with pytest.raises(CommandError, match="HOOKBRIDGE_PLUGINS_DIR is not set"):
            call_command("hooks", "list", stdout=StringIO())
    finally:
        discovered.cache_clear()


@pytest.mark.parametrize(
    ("config", "key"),
    [
        ({"hooks": {"lint": {"command": "x", "unknownProp": 1}}}, "hooks.lint.unknownProp"),
        ({"hooks": {"lint": {"command": "x"}}, "extra": 1}, "extra"),
        ({"hooks": {"lint": {"command": "x", "annotations": {"color": "red"}}}}, "hooks.lint.annotations.color"),
    ],
)
def test_an_unknown_key_is_a_warning_naming_it_and_the_plugin_still_loads(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, config: Any, key: str
) -> None:
    path = plugin(tmp_path, "newer", config)
    with caplog.at_level(logging.WARNING, logger="hooks.config"):
        found = discover(tmp_path)
    assert list(found.hooks) == ["newer_lint"]
    assert found.errors == []
    assert found.warnings == [f"{path}: {key}: unknown key, ignored"]
    assert f"{key}: unknown key" in caplog.text


def test_claude_codes_enabled_plugins_are_found_from_its_settings_and_marketplaces(tmp_path: Path) -> None:
    from hooks.config import claude_code_plugins

    home, project = tmp_path / "home", tmp_path / "project"
    market = home / ".claude" / "plugins" / "marketplaces" / "team-market"
    plugin(market / "plugins", "jutsu-biome", {"hooks": {"lint": {"command": "biome check"}}})
    plugin(market / "plugins", "jutsu-off", {"hooks": {"lint": {"command": "true"}}})
    (market / ".claude-plugin").mkdir(parents=True)
    listing = [
        {"name": "jutsu-biome", "source": "./plugins/jutsu-biome"},
        {"name": "jutsu-off", "source": "./plugins/jutsu-off"},
    ]
    (market / ".claude-plugin" / "marketplace.json").write_text(json.dumps({"name": "team-market", "plugins": listing}))
    (home / ".claude" / "plugins" / "known_marketplaces.json").write_text(
        json.dumps({"team-market": {"installLocation": str(market)}})
    )
    # Installed from a repository: only in Claude Code's cache, one folder per version.
    plugin(
        home / ".claude" / "plugins" / "cache" / "gh-market" / "jutsu-pytest",
        "1.2.0",
        {"hooks": {"test": {"command": "pytest"}}},
    )
    (home / ".claude" / "settings.json").write_text(
        json.dumps(
            {
                "enabledPlugins": {
                    "jutsu-biome@team-market": True,
                    "jutsu-off@team-market": True,
                    "jutsu-pytest@gh-market": True,
                }
            }
        )
    )
    (project / ".claude").mkdir(parents=True)
    # The project's local settings turn one off again; a later file wins.
    (project / ".claude" / "settings.local.json").write_text(
        json.dumps({"enabledPlugins": {"jutsu-off@team-market": False}})
    )
    found = claude_code_plugins(home, project)
    assert [name for name, _ in found] == ["jutsu-biome", "jutsu-pytest"]
    own = tmp_path / "own"
    plugin(own, "jutsu-mine", {"hooks": {"check": {"command": "true"}}})
    assert sorted(discover(own, more=found).hooks) == ["jutsu_biome_lint", "jutsu_mine_check", "jutsu_pytest_test"]


def test_no_claude_settings_finds_no_plugins(tmp_path: Path) -> None:
    from hooks.config import claude_code_plugins

    assert claude_code_plugins(tmp_path) == []
