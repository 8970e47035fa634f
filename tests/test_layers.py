"""The layers of the code base, as ``docs/architecture.md`` draws them.

Every ``import`` of a module of ``engine``, ``plugins``, ``bots`` and ``arena`` is read
from its source (also those inside functions) and checked against what its layer may
import. A cycle between modules that import each other at load time is an error too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("engine", "plugins", "bots", "arena")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports(path: Path, top_level_only: bool = False) -> set[str]:
    """Absolute names of the project modules ``path`` imports."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    nodes = tree.body if top_level_only else ast.walk(tree)
    found = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            found.add(mod)
            # `from pkg import submodule` imports the submodule too
            found.update(f"{mod}.{alias.name}" for alias in node.names)
    return {m for m in found if m.split(".")[0] in PACKAGES}


def sources(package: str) -> list[Path]:
    return sorted(p for p in (ROOT / package).rglob("*.py") if "examples" not in p.parts)


def offending(package: str, allowed) -> list[str]:
    return [f"{module_name(p)} imports {m}" for p in sources(package) for m in sorted(imports(p))
            if not allowed(m)]


def test_engine_imports_nothing_of_the_host_the_bots_or_the_variants():
    assert offending("engine", lambda m: m.startswith("engine")) == []


def test_plugins_import_only_the_engine():
    assert offending("plugins", lambda m: m.startswith(("engine", "plugins"))) == []


@pytest.mark.parametrize("host", ["arena.tournament", "arena.league", "arena.experiment", "arena.cli",
                                  "arena.referee", "arena.bench", "arena.replay"])
def test_bots_do_not_import_the_hosts_runner(host):
    assert [line for line in offending("bots", lambda m: not m.startswith(host))] == []


def test_nothing_imports_the_command_line():
    found = [line for pkg in PACKAGES if pkg != "arena" for line in offending(pkg, lambda m: not m.startswith("arena.cli"))]
    found += [f"{module_name(p)} imports {m}" for p in sources("arena") if "cli" not in p.parts
              for m in imports(p) if m.startswith("arena.cli")]
    assert found == []


def test_no_module_names_a_variant_or_bot_package_to_find_it():
    """Built-in variants and bots are found through the entry-point group, like third-party ones."""
    for path in sources("engine") + sources("arena"):
        text = path.read_text(encoding="utf-8")
        assert "import plugins" not in text and "pkgutil" not in text, path


def test_no_import_cycles_at_load_time():
    graph = {}
    for pkg in PACKAGES:
        for p in sources(pkg):
            name = module_name(p)
            graph[name] = {m for m in imports(p, top_level_only=True) if m != name}
    modules = set(graph)
    graph = {k: {m for m in v if m in modules} for k, v in graph.items()}
    cycles = []
    state: dict[str, int] = {}

    def visit(node, trail):
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                # a package's __init__ importing its own submodules is not a cycle of concern
                cycle = trail[trail.index(nxt):] + [nxt] if nxt in trail else [node, nxt]
                if not all(a.startswith(b + ".") or b.startswith(a + ".") for a, b in zip(cycle, cycle[1:])):
                    cycles.append(" -> ".join(cycle))
            elif nxt not in state:
                visit(nxt, trail + [nxt])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    assert cycles == []


#: what each of the host's lower layers may not import: a bot command's meaning
#: (arena.botspec) and bot packages (arena.packages) sit below the process layer's callers;
#: the cluster runs what it is given (the tournament's executor hands it a batch to play and
#: receives the records), so it knows nothing of tournaments
LOWER = {
    "arena.botspec": ("arena.process", "arena.packages", "arena.tournament", "arena.league", "arena.web",
                      "arena.cluster", "arena.experiment", "arena.referee"),
    "arena.process": ("arena.packages", "arena.tournament", "arena.league", "arena.web", "arena.cluster",
                      "arena.experiment"),
    "arena.packages": ("arena.tournament", "arena.league", "arena.web", "arena.cluster", "arena.experiment"),
    "arena.cluster": ("arena.web", "arena.league", "arena.tournament"),
}


@pytest.mark.parametrize("layer", sorted(LOWER))
def test_lower_layers_do_not_import_higher_ones(layer):
    folder = ROOT / Path(*layer.split("."))
    found = [f"{module_name(p)} imports {m}" for p in sorted(folder.rglob("*.py"))
             for m in sorted(imports(p)) if m.startswith(LOWER[layer])]
    assert found == []


def test_games_are_played_through_one_seam_below_the_tournament():
    """``arena.execution`` plays a batch of games and hands back their records for every
    caller: the cluster's workers play its unit of work and never import the tournament;
    leagues and experiments take it (executor, ``WAIT``, ``Interrupted``) from the seam, not
    from the tournament's runner or executors; the seam imports none of its callers, and the
    layers below it do not import it."""
    rules = {
        "arena/cluster": ("arena.tournament",),
        "arena/league": ("arena.tournament.executors", "arena.tournament.dask_executor", "arena.tournament.runner",
                         "arena.tournament.inprocess"),
        "arena/experiment": ("arena.tournament.executors", "arena.tournament.dask_executor",
                             "arena.tournament.runner", "arena.tournament.inprocess"),
        "arena/execution": ("arena.cluster", "arena.tournament", "arena.league", "arena.experiment", "arena.web",
                            "arena.bench", "arena.rl", "arena.cli"),
        "arena/botspec": ("arena.execution",),
        "arena/process": ("arena.execution",),
        "arena/packages": ("arena.execution",),
    }
    graph = module_graph()
    found = [f"{module_name(p)} imports {m}" for folder, banned in rules.items() for p in sources(folder)
             for m in sorted(graph[module_name(p)]) if m.startswith(banned)]
    assert found == []


def test_one_module_says_what_a_bot_command_is():
    """No second copy of the interpreter list or of the script finder outside arena.botspec."""
    for path in sources("arena"):
        if "botspec" in path.parts:
            continue
        text = path.read_text(encoding="utf-8")
        assert "def script_of" not in text or "botspec" in text, path
        assert "INTERPRETERS = " not in text and "INTERPRETER_RE = " not in text, path


#: the longest a function of ``arena`` and ``engine`` may be: past it, it does several things
LONGEST = 100


def long_functions(packages=("arena", "engine")) -> list[str]:
    """``module.function: N lines`` for each function (or method) longer than :data:`LONGEST`."""
    return [f"{module_name(p)}.{node.name}: {node.end_lineno - node.lineno + 1} lines"
            for pkg in packages for p in sources(pkg)
            for node in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and node.end_lineno - node.lineno + 1 > LONGEST]


def test_no_function_is_over_100_lines():
    """A function of the host or the engine says one thing; a long one is split by what its
    parts mean (named helpers), not by line count."""
    assert long_functions() == []


def _is_type_checking(node) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"))


def _run_nodes(tree):
    """Every node of ``tree`` that runs, also inside functions, but not under ``if TYPE_CHECKING:``."""
    todo = [tree]
    while todo:
        node = todo.pop()
        yield node
        todo.extend(child for child in ast.iter_child_nodes(node) if not _is_type_checking(child))


def module_graph() -> dict[str, set[str]]:
    """Which project module imports which, counting every import that runs (at load time or
    inside a function: a late import still makes the modules depend on each other);
    ``from package import name`` names the submodule when ``name`` is one, else the package."""
    paths = {module_name(p): p for pkg in PACKAGES for p in sources(pkg)}
    graph = {}
    for name, path in paths.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        found = set()
        for node in _run_nodes(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)] if node.level else []
                mod = ".".join(base + ([node.module] if node.module else []))
                for alias in node.names:
                    found.add(f"{mod}.{alias.name}" if f"{mod}.{alias.name}" in paths else mod)
        graph[name] = {m for m in found if m in paths and m != name}
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[str]:
    """The groups of modules that import each other, directly or around a circle (the
    strongly connected components of more than one module), as ``a <-> b <-> c``."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups = []

    def strong(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while not group or group[-1] != v:
                group.append(stack.pop())
            if len(group) > 1:
                groups.append(" <-> ".join(sorted(group)))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    return sorted(groups)


def test_no_import_cycle_between_modules():
    """One concept, one place: when two modules need the same thing it moves below both, so no
    two modules import each other, around any circle, even through an import inside a
    function (only ``if TYPE_CHECKING:`` imports, which never run, are left out)."""
    assert import_cycles(module_graph()) == []


def test_the_cycle_finder_sees_late_imports_and_skips_type_checking_ones():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert import_cycles(graph) == ["a <-> b <-> c"]
    tree = ast.parse("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import arena.x\n"
                     "def f():\n    import arena.y\n")
    names = {alias.name for node in _run_nodes(tree) if isinstance(node, ast.Import) for alias in node.names}
    assert names == {"arena.y"}


def test_the_web_app_has_no_long_function_and_no_import_cycle():
    """``arena.web`` is routes to short endpoints over one state: no function over 100 lines,
    and no two of its modules import each other, not even through an import inside a function."""
    files = sources("arena/web")
    long = [f"{module_name(p)}.{node.name}: {node.end_lineno - node.lineno + 1} lines" for p in files
            for node in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno - node.lineno >= 100]
    graph = {module_name(p): imports(p) for p in files}
    graph = {k: {m for m in v if m in graph and m not in (k, "arena.web")} for k, v in graph.items()}

    def reach(start: str) -> set[str]:
        seen, todo = set(), [start]
        while todo:
            for nxt in graph[todo.pop()] - seen:
                seen.add(nxt)
                todo.append(nxt)
        return seen

    reached = {m: reach(m) for m in graph}
    cycles = sorted({" <-> ".join(sorted(m for m in graph if m == a or (m in reached[a] and a in reached[m])))
                     for a in graph if a in reached[a]})
    assert {"over 100 lines": long, "cycles": cycles} == {"over 100 lines": [], "cycles": []}
