"""No import cycle in `vttrelay` (DESIGN §11): what the import-linter contracts of pyproject.toml
(`lint-imports`, run by .ci/run) do not check. The graph is grimp's, the one import-linter reads:
imports inside functions and under `if TYPE_CHECKING:` count."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import grimp


def cycles(modules: Iterable[str], imports: Callable[[str], Iterable[str]]) -> list[list[str]]:
    """The import cycles of a graph: its strongly connected components of more than one module
    (Tarjan's algorithm, iterative), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(modules):
        if root in index:
            continue
        work = [(root, iter(sorted(imports(root))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, targets = work[-1]
            for target in targets:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(imports(target)))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def test_the_cycle_finder_finds_cycles_and_only_them() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e", "d"}}
    assert cycles(graph, graph.__getitem__) == [["a", "b", "c"]]
    chain = {f"m{i}": {f"m{i + 1}"} for i in range(5000)} | {"m5000": {"m0"}}  # deep: no recursion
    assert [len(c) for c in cycles(chain, chain.__getitem__)] == [5001]


def test_no_import_cycle_anywhere_in_vttrelay() -> None:
    graph = grimp.build_graph("vttrelay", cache_dir=None)
    assert cycles(graph.modules, graph.find_modules_directly_imported_by) == []


def test_a_plugin_imported_by_the_relay_is_a_cycle_the_check_catches() -> None:
    """A cycle like issue 21's put back (the relay's route table importing the dashboard's views,
    which import the route table): the check above fails on it."""
    graph = grimp.build_graph("vttrelay", cache_dir=None)
    graph.add_import(importer="vttrelay.relay.routes", imported="vttrelay.dashboard.views")
    found = cycles(graph.modules, graph.find_modules_directly_imported_by)
    assert len(found) == 1
    assert {"vttrelay.relay.routes", "vttrelay.dashboard.views"} <= set(found[0])


def test_a_cycle_inside_the_relay_is_caught_too() -> None:
    """One of the relay's former cycles put back (the session routes importing the application's
    state, which names their service): inside one package, a cycle fails the check as well."""
    graph = grimp.build_graph("vttrelay", cache_dir=None)
    graph.add_import(importer="vttrelay.relay.sessions_api", imported="vttrelay.relay.state")
    found = cycles(graph.modules, graph.find_modules_directly_imported_by)
    assert found == [["vttrelay.relay.sessions_api", "vttrelay.relay.state"]]
