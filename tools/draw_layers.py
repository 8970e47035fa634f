"""Draw ``docs/img/layers.svg``: the project's packages in layers, from its real import graph.

The imports are read as ``tests/test_layers.py`` reads them (every import that runs, also
inside functions; not those under ``if TYPE_CHECKING:``), grouped by package (``engine``,
``plugins``, ``bots``, and each package or module of ``arena``). Each group sits one layer
above the highest group it imports, so every arrow points down; groups that import each
other would share a layer and their arrows are drawn red. ``tests/test_architecture_picture.py``
draws it again and compares, so the picture cannot drift from the code::

    python tools/draw_layers.py          # rewrite docs/img/layers.svg
"""

from __future__ import annotations

import importlib.util
import sys
from html import escape
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "img" / "layers.svg"

BOX_W, BOX_H, GAP_X, GAP_Y, MARGIN = 132, 34, 30, 56, 24
COLOURS = {"engine": "#dbe9f6", "plugins": "#dff1d8", "bots": "#fde8cc", "arena": "#ece6f5"}
#: modules of ``arena`` shown as one box: the small things every layer uses
BASICS = {"arena.errors", "arena.jsonline", "arena.progress"}


def _layer_test():
    spec = importlib.util.spec_from_file_location("_layer_rules", ROOT / "tests" / "test_layers.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def group_of(module: str) -> str | None:
    """The box a module is drawn in (None: the ``arena`` package's own ``__init__``)."""
    parts = module.split(".")
    if parts[0] != "arena":
        return parts[0]
    if len(parts) == 1:
        return None
    name = "arena." + parts[1]
    return "arena basics" if name in BASICS else name


def group_graph() -> dict[str, dict[str, int]]:
    """``{group: {imported group: how many module imports}}`` of the whole project."""
    graph: dict[str, dict[str, int]] = {}
    for module, imported in _layer_test().module_graph().items():
        a = group_of(module)
        if a is None:
            continue
        edges = graph.setdefault(a, {})
        for m in imported:
            b = group_of(m)
            if b is not None and b != a:
                edges[b] = edges.get(b, 0) + 1
    return graph


def levels(graph: dict[str, dict[str, int]]) -> dict[str, int]:
    """Each group's layer: 0 for a group that imports no other, else one above the highest
    group it imports. Of two groups that import each other, the one importing the other
    from fewer modules is not lifted by that import (its arrow is drawn red, upward); a
    longer circle is cut where the walk meets it again."""
    level: dict[str, int] = {}
    visiting: set[str] = set()

    def lifts(g: str, d: str) -> bool:
        back = graph.get(d, {}).get(g)
        return back is None or (graph[g][d], d) > (back, g)

    def walk(g: str) -> int:
        if g in level:
            return level[g]
        if g in visiting:
            return -1  # a circle: cut here, its arrow drawn red
        visiting.add(g)
        level[g] = max((walk(d) + 1 for d in sorted(graph.get(g, {})) if lifts(g, d)), default=0)
        visiting.discard(g)
        return level[g]

    for g in sorted(graph):
        walk(g)
    return level


def shown_edges(graph: dict[str, dict[str, int]], level: dict[str, int]) -> dict[tuple[str, str], int]:
    """The arrows drawn: every import between groups that no chain of other downward arrows
    already implies (the transitive reduction, so the layers stay readable), and every
    import that does not point down (a cycle between groups), which is always drawn."""
    down = {a: {b for b in bs if level[b] < level[a]} for a, bs in graph.items()}

    def reaches(start: str, goal: str, skip: tuple[str, str]) -> bool:
        seen, todo = set(), [start]
        while todo:
            g = todo.pop()
            for nxt in down.get(g, ()):
                if (g, nxt) != skip and nxt not in seen:
                    if nxt == goal:
                        return True
                    seen.add(nxt)
                    todo.append(nxt)
        return False

    return {(a, b): n for a, bs in graph.items() for b, n in bs.items()
            if level[b] >= level[a] or not reaches(a, b, (a, b))}


def _order(graph, level) -> list[list[str]]:
    """The groups of each layer, top layer first, ordered to keep arrows short: by the mean
    position of what they import (two passes, ties by name)."""
    rows = [sorted(g for g in level if level[g] == k) for k in range(max(level.values()) + 1)]
    for _ in range(2):
        pos = {g: i / max(1, len(row) - 1) for row in rows for i, g in enumerate(row)}
        for row in rows[1:]:
            row.sort(key=lambda g: (sum(pos[d] for d in graph[g]) / len(graph[g]) if graph[g] else 0.5, g))
    return rows[::-1]


def svg() -> str:
    """The picture, as SVG text (the same text for the same code)."""
    graph = group_graph()
    level = levels(graph)
    rows = _order(graph, level)
    widest = max(len(r) for r in rows)
    width = 2 * MARGIN + widest * BOX_W + (widest - 1) * GAP_X
    height = 2 * MARGIN + 40 + len(rows) * BOX_H + (len(rows) - 1) * GAP_Y
    at = {}
    for r, row in enumerate(rows):
        span = len(row) * BOX_W + (len(row) - 1) * GAP_X
        x0 = (width - span) / 2
        for i, g in enumerate(row):
            at[g] = (x0 + i * (BOX_W + GAP_X), MARGIN + 40 + r * (BOX_H + GAP_Y))
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
           f'viewBox="0 0 {width:.0f} {height:.0f}" font-family="sans-serif" font-size="12">',
           '<defs><marker id="a" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
           'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#555"/></marker>'
           '<marker id="r" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
           'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#c00"/></marker></defs>',
           f'<rect width="{width:.0f}" height="{height:.0f}" fill="white"/>',
           f'<text x="{MARGIN}" y="{MARGIN}" font-size="13" font-weight="bold">Who imports whom, drawn from '
           f'the code by tools/draw_layers.py</text>',
           f'<text x="{MARGIN}" y="{MARGIN + 18}" font-size="11">An arrow imports (thicker: from more modules); '
           f'one that a chain of arrows implies is not drawn; red: an import that does not point down.</text>']
    for (a, b), n in sorted(shown_edges(graph, level).items()):
        (xa, ya), (xb, yb) = at[a], at[b]
        up = level[b] >= level[a]
        colour, marker = ("#c00", "r") if up else ("#555", "a")
        x1, y1 = xa + BOX_W / 2, ya + (BOX_H if not up else 0)
        x2, y2 = xb + BOX_W / 2, yb + (0 if not up else BOX_H)
        stroke = 0.6 + min(n, 20) / 8
        out.append(f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="{colour}" '
                   f'stroke-opacity="0.6" stroke-width="{stroke:.2f}" marker-end="url(#{marker})">'
                   f'<title>{escape(a)} imports {escape(b)} ({n})</title></line>')
    for g, (x, y) in sorted(at.items()):
        fill = COLOURS[g.split(".")[0].split(" ")[0]]
        label = g.replace("arena.", "arena/")
        out.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{BOX_W}" height="{BOX_H}" rx="5" fill="{fill}" '
                   f'stroke="#333"/><text x="{x + BOX_W / 2:.1f}" y="{y + BOX_H / 2 + 4:.1f}" '
                   f'text-anchor="middle">{escape(label)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main() -> None:
    OUT.write_text(svg(), encoding="utf-8")
    print(f"wrote {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    sys.exit(main())
