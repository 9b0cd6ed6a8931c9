"""Dependencies run one way (docs/architecture.md): import-linter holds the layers between apps; this holds files.

No two modules import each other, directly or through others, TYPE_CHECKING imports included.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parent.parent

# The whole tree: the site shell, the apps, core, and the benchmarks beside them.
APPS = (
    "hookbridge_site",
    "core",
    "tokens",
    "lifecycle",
    "hooks",
    "questions",
    "claudecode",
    "dashboard",
    "mcpapi",
    "bench",
)


def test_it_has_no_import_cycles_between_files() -> None:
    graph = grimp.build_graph(*APPS)
    cycles = []
    for module in sorted(graph.modules):
        for imported in sorted(graph.find_modules_directly_imported_by(module)):
            back = graph.find_shortest_chain(importer=imported, imported=module)
            if back is not None:
                cycles.append(" -> ".join((module, *back)))
    assert cycles == [], "\n".join(cycles)


def test_it_would_see_a_cycle() -> None:
    # The check above must be able to fail: grimp reports the loop in a graph that has one.
    graph = grimp.ImportGraph()
    graph.add_import(importer="app.models", imported="app.live")
    graph.add_import(importer="app.live", imported="app.models")
    assert graph.find_shortest_chain(importer="app.live", imported="app.models") == ("app.live", "app.models")


def test_the_layers_hold_without_exceptions() -> None:
    # The site shell is the top floor, so nothing needs an ignore to import every app (issue 28).
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    assert config["contracts"][0]["layers"][0] == "hookbridge_site"
    assert config["contracts"][0]["layers"][-1] == "core"
    assert [contract["name"] for contract in config["contracts"] if contract.get("ignore_imports")] == []
    assert set(config["root_packages"]) == set(APPS) - {"bench"}


def test_every_template_folder_ships_in_the_wheel() -> None:
    data_files = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["data-files"]
    shipped = {pattern for patterns in data_files.values() for pattern in patterns}
    folders = {path.parent for path in (ROOT / "templates").rglob("*") if path.is_file()}
    assert {f"{folder.relative_to(ROOT)}/*.html" for folder in folders} == shipped
    assert all(path.suffix == ".html" for path in (ROOT / "templates").rglob("*") if path.is_file())
    for target, patterns in data_files.items():
        assert [f"{target.removeprefix('share/hookbridge/')}/*.html"] == patterns
