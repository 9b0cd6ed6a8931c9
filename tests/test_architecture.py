"""Dependencies run one way (docs/architecture.md): import-linter holds the layers between apps; this holds files.

No two modules import each other, directly or through others, TYPE_CHECKING imports included.
"""

from __future__ import annotations

import grimp

APPS = ("hookbridge_site", "tokens", "lifecycle", "hooks", "questions", "claudecode", "dashboard", "mcpapi")


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
