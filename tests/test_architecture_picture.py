"""docs/architecture.md draws the layers as the code has them: its SVG is drawn from the
import graph by tools/draw_layers.py (and drawn again here), its Mermaid picture and tables
name every package of the host, and every path it names exists."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "architecture.md"


def _drawer():
    spec = importlib.util.spec_from_file_location("_draw_layers", ROOT / "tools" / "draw_layers.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_svg_is_the_one_the_import_graph_draws():
    drawer = _drawer()
    committed = drawer.OUT.read_text(encoding="utf-8") if drawer.OUT.exists() else ""
    assert committed == drawer.svg(), "who imports whom changed: run `python tools/draw_layers.py` and commit it"


def test_the_svg_draws_every_group_once_and_only_downward_or_red_arrows():
    drawer = _drawer()
    graph = drawer.group_graph()
    level = drawer.levels(graph)
    text = drawer.svg()
    for group in graph:
        assert text.count(f">{group.replace('arena.', 'arena/')}</text>") == 1, group
    for (a, b) in drawer.shown_edges(graph, level):
        colour = "#c00" if level[b] >= level[a] else "#555"
        assert re.search(rf'stroke="{colour}"[^>]*><title>{re.escape(a)} imports {re.escape(b)} ', text), (a, b)


def _mermaid_blocks() -> list[str]:
    return re.findall(r"```mermaid\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)


def test_the_mermaid_layers_name_every_package_of_the_host():
    blocks = _mermaid_blocks()
    assert len(blocks) >= 3, "the layers, the path of a game and the path of a page request"
    layers = blocks[0]
    assert layers.startswith("flowchart")
    folders = sorted(p.name for p in (ROOT / "arena").iterdir() if (p / "__init__.py").exists())
    modules = sorted(p.name for p in (ROOT / "arena").glob("*.py") if p.name not in ("__init__.py", "__main__.py"))
    missing = [f"arena/{f}" for f in folders if f"arena/{f}" not in layers]
    missing += [m for m in modules if m not in layers]
    missing += [top for top in ("engine/", "plugins/", "bots/") if top not in layers]
    assert missing == []


def test_the_page_names_every_module_of_the_host_and_nothing_that_is_gone():
    text = DOC.read_text(encoding="utf-8")
    modules = sorted(f"arena/{p.name}" for p in (ROOT / "arena").glob("*.py")
                     if p.name not in ("__init__.py", "__main__.py"))
    named = set(re.findall(r"\b((?:arena|engine|plugins|bots|tools|tests)/[\w/]+\.(?:py|json))", text))
    assert {"not named": [m for m in modules if m not in text],
            "gone": sorted(p for p in named if not (ROOT / p).exists())} == {"not named": [], "gone": []}
