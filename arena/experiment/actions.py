"""How often each action is used, per rule set, and which differences the games show.

Every game's actions are counted by type from its record (the engine's action log, the
same entries a replay file holds: ``take_puzzle``, ``place``, ``master``, ``ghost``,
``level_up``, ...) into the game's row as ``actions_<type>`` columns (all seats together;
a type a game never used is 0). The report gets two sections from here:

- **Actions**: per rule set, each type's mean uses per game with a 95% interval over the
  seat-rotated groups, and the share of games that used it at all (Wilson).
- **Significant differences**: every paired difference against the first rule set (the
  report's own figures and the action counts) whose 95% interval excludes 0, in words;
  the rest are named as not shown by these games.
"""

from __future__ import annotations

from engine import action_to_json
from engine.stats import mean_ci, paired, wilson

#: prefix of the per-game action columns of ``games.csv``
PREFIX = "actions_"


def action_counts(source) -> dict[str, int]:
    """Uses of each action type in one game, all seats together.

    ``source`` is a played :class:`engine.Game` (its action log) or a replay record (its
    ``actions`` entries); a forfeit counts as ``forfeit``.
    """
    counts: dict[str, int] = {}
    if isinstance(source, dict):
        names = [e["action"].get("type", "?") if isinstance(e.get("action"), dict) else "forfeit"
                 for e in source.get("actions") or []]
    else:
        rules = source.rules
        names = ["forfeit" if a is None else action_to_json(rules, a)["type"] for _, a in source.history]
    for name in names:
        counts[name] = counts.get(name, 0) + 1
    return counts


def action_columns(outcome: dict) -> dict[str, int]:
    """The ``actions_<type>`` columns of a game's row, from the counts an experiment game
    added to its outcome (none when it added none)."""
    return {PREFIX + k: v for k, v in sorted((outcome.get("action_counts") or {}).items())}


def _types(rows: list[dict]) -> list[str]:
    totals: dict[str, int] = {}
    for r in rows:
        for k, v in r.items():
            if k.startswith(PREFIX):
                totals[k[len(PREFIX):]] = totals.get(k[len(PREFIX):], 0) + int(v or 0)
    return sorted(totals, key=lambda t: (-totals[t], t))


def _count(row: dict, kind: str) -> int:
    return int(row.get(PREFIX + kind) or 0)


def usage(rows_by: dict[str, list[dict]]) -> dict:
    """Per rule set and action type: ``{"per_game": mean_ci, "games_using": wilson}``, and
    per other rule set the paired difference in uses per game against the first."""
    all_rows = [r for rows in rows_by.values() for r in rows]
    kinds = _types(all_rows)
    names = list(rows_by)
    out = {"types": kinds, "rule_sets": {}, "paired": {}}
    for n in names:
        rows = rows_by[n]
        out["rule_sets"][n] = {
            k: {"per_game": mean_ci([_count(r, k) for r in rows], [r["group"] for r in rows]),
                "games_using": wilson(sum(1 for r in rows if _count(r, k)), len(rows))}
            for k in kinds}
    for n in names[1:]:
        out["paired"][n] = {k: paired(rows_by[names[0]], rows_by[n], lambda r, k=k: _count(r, k)) for k in kinds}
    return out


def _ci(x: dict | None, sign: bool = False) -> str:
    if not x or x.get("mean") is None:
        return "-"
    f = "{:+.2f}" if sign else "{:.2f}"
    return f"{f.format(x['mean'])} [{f.format(x['low'])}, {f.format(x['high'])}]"


def significant(x: dict | None) -> bool:
    """Whether a paired difference's 95% interval excludes 0."""
    return bool(x and x.get("mean") is not None and x["n"] > 1 and (x["low"] > 0 or x["high"] < 0))


def report_lines(rows: list[dict], comp: dict) -> list[str]:
    """The report's *Actions* and *Significant differences* sections (Markdown lines)."""
    names = comp["rule_sets"]
    rows_by = {n: [r for r in rows if r["rule_set"] == n] for n in names}
    use = usage(rows_by)
    kinds = use["types"]
    lines: list[str] = []
    if kinds:
        lines += ["", "## Actions", "",
                  "Uses of each action per game (all seats), mean [95% interval]; in brackets after it, the "
                  "share of games that used it at all.", ""]
        lines += ["| action | " + " | ".join(names) + " |", "|" + "---|" * (len(names) + 1)]
        for k in kinds:
            cells = []
            for n in names:
                u = use["rule_sets"][n][k]
                cells.append(f"{_ci(u['per_game'])} ({u['games_using']['rate']:.0%})"
                             if u["games_using"]["rate"] is not None else "-")
            lines.append(f"| `{k}` | " + " | ".join(cells) + " |")
        if len(names) > 1:
            lines += ["", f"Paired difference in uses per game against `{names[0]}` (same deal, same seats); "
                      "**bold**: the 95% interval excludes 0.", ""]
            lines += ["| action | " + " | ".join(names[1:]) + " |", "|" + "---|" * len(names)]
            for k in kinds:
                cells = []
                for n in names[1:]:
                    d = use["paired"][n][k]
                    cells.append(f"**{_ci(d, True)}**" if significant(d) else _ci(d, True))
                lines.append(f"| `{k}` | " + " | ".join(cells) + " |")
    if len(names) > 1:
        lines += ["", "## Significant differences", "",
                  f"Against `{names[0]}`, paired by deal and seats; a difference is listed when its 95% interval "
                  "excludes 0 (with several figures compared, about one in twenty such listings can be chance).", ""]
        for n in names[1:]:
            shown, not_shown = [], []
            figures = [(m, d) for m, d in (comp.get("paired", {}).get(n) or {}).items()]
            figures += [(f"`{k}` per game", use["paired"][n][k]) for k in kinds]
            for m, d in figures:
                (shown if significant(d) else not_shown).append(f"{m} {_ci(d, True)}" if significant(d) else m)
            text = "; ".join(shown) if shown else "none of the measured figures differs"
            lines.append(f"- `{n}`: {text}." + (f" Not shown: {', '.join(not_shown)}." if not_shown else ""))
    return lines


__all__ = ["PREFIX", "action_columns", "action_counts", "report_lines", "significant", "usage"]
