"""Dependencies run one way (docs/architecture.md): import-linter holds the layers between apps; this holds files.

No two modules import each other, directly or through others, TYPE_CHECKING imports included.
"""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[2]

# The whole tree import-linter sees: the packages it layers (the site shell, the apps, core), and beside them the
# test harness, the system tests and the benchmarks.
EVERY_PACKAGE = tuple(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["root_packages"])
BESIDE = ("testing", "tests", "bench")
LAYERED = tuple(package for package in EVERY_PACKAGE if package not in BESIDE)
APPS = (*LAYERED, "testing")  # code that is not a test or a benchmark script


def beside_an_app(path: Path) -> bool:
    """An app's own tests (<app>/tests/): they set process state up and may run long scenarios."""
    return "tests" in path.relative_to(ROOT).parts


def test_it_has_no_import_cycles_between_files() -> None:
    graph = grimp.build_graph(*EVERY_PACKAGE)
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
    # The site shell is the top floor, so nothing needs an ignore to import every app (issue 28); the one
    # exception is an app's own tests, which drive the whole site (issue 38).
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    assert config["contracts"][0]["layers"][0] == "hookbridge_site"
    assert config["contracts"][0]["layers"][-1] == "core"
    ignores = {tuple(contract.get("ignore_imports", ())) for contract in config["contracts"]}
    assert ignores <= {(), ("*.tests.** -> **",)}
    packages = {package for layer in config["contracts"][0]["layers"] for package in layer.split(" | ")}
    assert packages == set(LAYERED)


def test_every_template_folder_ships_in_the_wheel() -> None:
    data_files = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["data-files"]
    shipped = {pattern for patterns in data_files.values() for pattern in patterns}
    files = [path for path in (ROOT / "templates").rglob("*") if path.is_file()]
    # Every kind of file in every folder (pages are .html; a mail's plain text is .txt).
    assert {f"{path.parent.relative_to(ROOT)}/*{path.suffix}" for path in files} == shipped
    for target, patterns in data_files.items():
        folder = target.removeprefix("share/hookbridge/")
        assert all(pattern.startswith(f"{folder}/*.") for pattern in patterns), (target, patterns)


MUTATORS = {"add", "discard", "update", "pop", "clear", "set", "append", "remove", "setdefault", "popitem"}


def state_writes(path: Path, package: str) -> list[str]:
    """Where a module writes a runtime module's names: assigned, augmented, or changed in place."""
    tree = ast.parse(path.read_text())
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for name in node.names:
                if name.name == "runtime" and node.module.split(".")[0] in APPS:
                    aliases[name.asname or name.name] = node.module.split(".")[0]
    writes = []
    for node in ast.walk(tree):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in MUTATORS:
            targets = [node.func.value]
        for target in targets:
            parts = list(target.elts) if isinstance(target, ast.Tuple) else [target]
            for part in parts:
                while isinstance(part, ast.Subscript):  # runtime.counts[key] = ... writes runtime.counts
                    part = part.value
                if isinstance(part, ast.Attribute) and isinstance(part.value, ast.Name) and part.value.id in aliases:
                    owner = aliases[part.value.id]
                    if owner != package:
                        writes.append(
                            f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', 0)} writes {owner}.runtime.{part.attr}"
                        )
    return writes


def test_no_module_writes_another_apps_state() -> None:
    # Each app keeps its process state in its own runtime module (issue 28); others call its functions.
    writes = []
    for package in APPS:
        for path in (ROOT / package).rglob("*.py"):
            if not beside_an_app(path):
                writes += state_writes(path, package)
    assert writes == []


def test_it_would_see_another_apps_state_written(tmp_path: Path) -> None:
    module = ROOT / "mcpapi" / "_probe_for_the_test.py"
    module.write_text("from hooks import runtime\nruntime.reserved_tool_names = frozenset()\n")
    try:
        assert state_writes(module, "mcpapi") == [
            "mcpapi/_probe_for_the_test.py:2 writes hooks.runtime.reserved_tool_names"
        ]
    finally:
        module.unlink()


def test_no_function_in_app_code_is_over_80_lines() -> None:
    # Long functions were where the house's friction sat (issue 28): the wait, the /mcp router, the timeline.
    long = []
    for package in APPS:  # the app code and the harness; the benchmarks are scripts beside it
        for path in (ROOT / package).rglob("*.py"):
            if "migrations" in path.parts or beside_an_app(path):
                continue
            functions = [
                node
                for node in ast.walk(ast.parse(path.read_text()))
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            ]
            for function in functions:
                if (lines := (function.end_lineno or 0) - function.lineno + 1) > 80:
                    long.append(f"{path.relative_to(ROOT)}:{function.lineno} {function.name} ({lines} lines)")
    assert long == []
