"""The ``Ruleset`` docstring (which docs/writing-a-variant.md points to) gives each seam the
signature the engine calls it with: checked against the base rules' own callables."""

from __future__ import annotations

import inspect
import re

from engine import RuleSpec, compile_rules
from engine.rules import Ruleset


def documented(seam: str) -> list[str]:
    """The parameter names the docstring gives ``seam``: ``- ``seam``: ``fn(a, b)``..."""
    doc = inspect.getdoc(Ruleset)
    m = re.search(rf"``{seam}``(?:(?!\n- ).)*?``fn\(([^)]*)\)", doc, re.S)
    assert m, f"the Ruleset docstring does not give {seam}'s signature"
    return [p.strip() for p in m.group(1).split(",")]


def params(fn) -> list[str]:
    return list(inspect.signature(fn).parameters)


def test_documented_signatures_match_the_base_rules():
    rs = compile_rules(RuleSpec(), 2)
    assert documented("setup") == params(rs.setup) == ["game", "rng", "deal"]
    assert documented("reward") == params(rs.reward) == ["game", "player", "card"]
    assert documented("decoders") == params(next(iter(rs.decoders.values()))) == ["rules", "obj"]
    assert documented("end_check") == ["game"]
    assert documented("event_filter") == ["game", "viewer", "event"]
    assert "arena_rules_configure" in inspect.getdoc(Ruleset)
