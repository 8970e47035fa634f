"""Markdown for an experiment's ``report.md``: the one table form that the report, the sweep's
figures (:mod:`.sweep_report`) and the bots' strength (:mod:`.strength`) all write."""

from __future__ import annotations


def table(header: list[str], rows: list[list[str]]) -> list[str]:
    """The lines of a Markdown table: ``header`` over a rule, then one line per row of cells."""
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return out
