"""No import cycles, module by module, in vtopo and the built-in kinds: not even through an import inside a
function or under TYPE_CHECKING. (`lint-imports` checks the packages: no two sibling packages import each other.)"""
from __future__ import annotations

import grimp
import networkx as nx


def test_no_module_reaches_itself_through_its_imports() -> None:
    graph = grimp.build_graph("vtopo", "vtopo_kinds", cache_dir=None)
    imports = nx.DiGraph((module, imported) for module in graph.modules
                         for imported in graph.find_modules_directly_imported_by(module))
    assert [sorted(cycle) for cycle in nx.strongly_connected_components(imports) if len(cycle) > 1] == []
