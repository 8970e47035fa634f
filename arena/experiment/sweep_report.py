"""The report's sections for sweeps, sequential stopping and searches, and their charts.

- **Sweep**: each figure against the swept values -- one table per figure (a row per value
  of one parameter; rows and columns for two), each cell the figure with its 95% interval,
  marked when its paired difference against the reference excludes 0; and one chart per
  figure (``sweep-<figure>.png``): the figure with its intervals against the value, or a
  heat map for two parameters.
- **Stopping**: per rule set the games it needed, its verdict and the anytime-valid interval
  that decided it.
- **Search**: the values that meet the target with their intervals, and every value ruled
  out and why.
"""

from __future__ import annotations

from pathlib import Path

from engine.stats import paired, win_share

from .markdown import table as _table
from .sequential import FIGURES


def sweep_figures(seats: int) -> list[tuple[str, str, object, object]]:
    """``(slug, label, summary getter, per-game metric)`` of every figure a sweep tabulates."""
    figs = [(f"seat{s}-wins", f"seat {s} wins", (lambda s: lambda x: x["seat_wins"][s])(s),
             (lambda s: lambda r: win_share(r, s))(s)) for s in range(seats)]
    figs += [
        ("rounds", "rounds", lambda x: x["rounds"], lambda r: r["rounds"]),
        ("score", "score per player", lambda x: x["score"], lambda r: FIGURES["score"][0](r, 0)),
        ("puzzles", "puzzles completed per game", None, lambda r: FIGURES["puzzles"][0](r, 0)),
        ("adjudicated", "adjudicated", lambda x: x["adjudicated"], lambda r: float(bool(r["adjudicated"]))),
    ]
    return figs


def _value(summary: dict, getter, rows: list[dict], metric) -> dict:
    if getter is not None:
        x = getter(summary)
        return {"mean": x.get("rate", x.get("mean")), "low": x["low"], "high": x["high"]}
    from engine.stats import mean_ci

    return mean_ci([metric(r) for r in rows], [r["group"] for r in rows])


def sweep_table(cfg, comp: dict, rows_by: dict[str, list[dict]], seq: dict | None = None) -> dict:
    """Every figure of every cell, with its paired difference against the reference:
    ``{slug: {"label", "cells": {name: {"mean", "low", "high", "diff": {...}, "differs"}}}}``;
    with a sequential run's outcome ``seq``, the cells of its figure also hold the anytime
    interval that decided them (``"anytime"``) when the rule measures the figure itself."""
    names = comp["rule_sets"]
    ref = names[0]
    seats = max(comp["summaries"][n]["seats"] for n in names)
    out = {}
    for slug, label, getter, metric in sweep_figures(seats):
        fn = metric
        cells = {}
        for rs in cfg.rule_sets:
            n = rs.name
            if n not in comp["summaries"] or not rows_by.get(n):
                continue
            v = _value(comp["summaries"][n], getter, rows_by[n], fn)
            d = paired(rows_by[ref], rows_by[n], fn) if n != ref and rows_by.get(ref) else None
            differs = bool(d and d["low"] is not None and (d["low"] > 0 or d["high"] < 0))
            cells[n] = {**v, "diff": d, "differs": differs}
            if seq and not cfg.stop.against and slug == _slug(cfg.stop):
                cells[n]["anytime"] = (seq["rule_sets"].get(n) or {}).get("interval")
        out[slug] = {"label": label, "cells": cells, "reference": ref}
    return out


def _fmt(x: dict, pct: bool) -> str:
    if x.get("mean") is None:
        return "-"
    f = (lambda v: f"{v:.0%}") if pct else (lambda v: f"{v:.2f}")
    return f"{f(x['mean'])} [{f(x['low'])}, {f(x['high'])}]" + (" **\\***" if x.get("differs") else "")


def sweep_lines(cfg, table: dict, charts: list[str]) -> list[str]:
    """The Markdown of the sweep: a table per figure against the swept values."""
    axes = cfg.axes
    ref = next(rs for rs in cfg.rule_sets if rs.name == next(iter(table.values()))["reference"])
    by_values = {rs.values: rs.name for rs in cfg.rule_sets if rs.values}
    unplayed = [rs.name for rs in cfg.rule_sets if all(rs.name not in f["cells"] for f in table.values())]
    lines = ["", "## Sweep", "",
             f"{len(by_values)} cells: " + "; ".join(f"`{a.name}` in {', '.join(_label(v) for v in a.values)}"
                                                   for a in axes)
             + f". The reference is `{ref.name}`; **\\*** marks a cell whose paired difference against it "
               "(same deals, same seats) has a 95% interval that excludes 0." + (
                   f" Not played (a search ruled them out unplayed): {', '.join(f'`{n}`' for n in unplayed)}."
                   if unplayed else ""), ""]
    pct_slugs = {s for s in table if s.endswith("-wins") or s == "adjudicated"}
    for slug, fig in table.items():
        cells = fig["cells"]
        pct = slug in pct_slugs
        lines += [f"### {fig['label']}", ""]
        if len(axes) == 2:
            a, b = axes
            rows = []
            for va in a.values:
                names = [by_values.get(((a.name, va), (b.name, vb))) for vb in b.values]
                rows.append([f"{a.name}={_label(va)}"] + [
                    _fmt(cells.get(n, {}), pct) + (" (reference)" if n == ref.name else "") for n in names])
            lines += _table([f"{a.name} \\ {b.name}"] + [_label(v) for v in b.values], rows)
        else:
            rows = [[name.replace(",", ", "), _fmt(cells[name], pct),
                     _fmt({**(cells[name]["diff"] or {}), "differs": False}, pct) if cells[name]["diff"] else "reference"]
                    for name in [rs.name for rs in cfg.rule_sets] if name in cells]
            lines += _table(["rule set", fig["label"], "difference from the reference"], rows)
        differ = [n for n, c in cells.items() if c["differs"]]
        lines += ["", (f"Differs from `{ref.name}`: " + ", ".join(f"`{n}`" for n in differ)) if differ
                  else f"No cell differs measurably from `{ref.name}`.", ""]
        chart = f"sweep-{slug}.png"
        if chart in charts:
            lines += [f"![{fig['label']}]({chart})", ""]
    return lines


def _slug(rule) -> str:
    """The sweep figure a stopping rule's figure is."""
    return f"seat{rule.seat}-wins" if rule.figure == "seat_wins" else rule.figure


def _label(v) -> str:
    from .sweep import _label as label

    return label(v)


def sweep_charts(out: Path, cfg, table: dict) -> list[str]:
    """One PNG per figure: intervals against the value (one parameter), a heat map (two)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    axes = cfg.axes
    if len(axes) not in (1, 2):
        return []
    by_values = {rs.values: rs.name for rs in cfg.rule_sets if rs.values}
    made = []
    for slug, fig in table.items():
        cells = fig["cells"]
        f, ax = plt.subplots(figsize=(7, 4.2))
        try:
            if len(axes) == 1:
                a = axes[0]
                names = [by_values.get(((a.name, v),)) for v in a.values]
                keep = [(v, cells[n]) for v, n in zip(a.values, names) if n in cells and cells[n]["mean"] is not None]
                numeric = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v, _ in keep)
                xs = [v for v, _ in keep] if numeric else list(range(len(keep)))
                mean = np.array([c["mean"] for _, c in keep], dtype=float)
                lo = np.maximum(0.0, mean - np.array([c["low"] for _, c in keep], dtype=float))
                hi = np.maximum(0.0, np.array([c["high"] for _, c in keep], dtype=float) - mean)
                ax.errorbar(xs, mean, yerr=[lo, hi], fmt="o-", capsize=4, label=f"{fig['label']} (fixed-sample 95%)")
                anytime = [(x, c["anytime"]) for x, (_, c) in zip(xs, keep) if c.get("anytime")
                           and c["anytime"].get("low") is not None]
                if anytime:
                    step = 0.12 * (min(np.diff(xs)) if len(xs) > 1 else 1)
                    ax.errorbar([x + step for x, _ in anytime], [a["mean"] for _, a in anytime],
                                yerr=[[max(0.0, a["mean"] - a["low"]) for _, a in anytime],
                                      [max(0.0, a["high"] - a["mean"]) for _, a in anytime]],
                                fmt="none", ecolor="tab:orange", capsize=3, label="anytime interval (decides the stop)")
                for x, (_, c) in zip(xs, keep):
                    if c["differs"]:
                        ax.plot([x], [c["mean"]], "r*", ms=12)
                rule = cfg.stop
                if rule is not None and rule.kind == "target" and slug == _slug(rule):
                    ax.axhspan(rule.low, rule.high, color="tab:green", alpha=0.15, label="target")
                ref = cells.get(fig["reference"])
                if ref and ref["mean"] is not None:
                    ax.axhline(ref["mean"], color="grey", ls="--", lw=0.8, label=f"reference ({fig['reference']})")
                if not numeric:
                    ax.set_xticks(xs, [_label(v) for v, _ in keep])
                ax.set_xlabel(a.name)
                ax.set_ylabel(f"{fig['label']} (95% interval)")
                ax.legend(fontsize=8)
            else:
                a, b = axes
                grid = np.full((len(a.values), len(b.values)), np.nan)
                for i, va in enumerate(a.values):
                    for j, vb in enumerate(b.values):
                        c = cells.get(by_values.get(((a.name, va), (b.name, vb))))
                        if c and c["mean"] is not None:
                            grid[i, j] = c["mean"]
                im = ax.imshow(grid, cmap="viridis", aspect="auto", origin="lower")
                mid = np.nanmean(grid)
                for i, va in enumerate(a.values):
                    for j, vb in enumerate(b.values):
                        c = cells.get(by_values.get(((a.name, va), (b.name, vb))))
                        if c and c["mean"] is not None:
                            ax.text(j, i, f"{c['mean']:.2f}" + ("*" if c["differs"] else ""), ha="center", va="center",
                                    fontsize=8, color="white" if c["mean"] < mid else "black")
                f.colorbar(im, ax=ax, label=fig["label"])
                ax.set_xticks(range(len(b.values)), [_label(v) for v in b.values])
                ax.set_yticks(range(len(a.values)), [_label(v) for v in a.values])
                ax.set_xlabel(b.name)
                ax.set_ylabel(a.name)
            ax.set_title(f"{fig['label']} against the swept value" + (" (* differs from the reference)"))
            f.tight_layout()
            f.savefig(out / f"sweep-{slug}.png", dpi=90)
            made.append(f"sweep-{slug}.png")
        finally:
            plt.close(f)
    return made


def sequential_lines(cfg, seq: dict) -> list[str]:
    """The games each rule set needed and why it stopped (``until:``), or the search's outcome."""
    rule = cfg.stop
    states = seq["rule_sets"]
    total = sum(s["games"] for s in states.values())
    cap_all = seq["cap_games"] * len(states)
    ci_name = "betting confidence sequence" if FIGURES[rule.figure][1] else "asymptotic normal-mixture confidence sequence"
    level = f"{1 - seq['alpha']:.4g}"
    if rule.kind == "until":
        what = (f"until its interval is at most {rule.width:g} wide" if rule.width is not None else
                "until the paired difference against the reference is decided"
                + (f" (excludes 0, or lies within ±{rule.margin:g})" if rule.margin else " (its interval excludes 0)"))
        lines = ["", "## Sequential stopping", "",
                 f"Each rule set played rounds of {rule.round} seat-rotated groups {what}, on {rule.describe()}, "
                 f"at most {rule.max_games} games. The intervals are a {level} {ci_name}: valid at every look, "
                 f"so stopping when the answer is known keeps each rule set's error rate at {seq['alpha']:.3g}.",
                 f"{total} games were played of the {cap_all} a fixed design would have played "
                 f"({total / max(1, cap_all):.0%}). The other intervals of this report are fixed-sample ones: "
                 "narrower, but not valid after a stop chosen by looking; read them as descriptions.", ""]
        rows = [[f"`{n}`", str(s["games"]), s["state"], _ci(s["interval"]), s["reason"] or "-"]
                for n, s in states.items()]
        return lines + _table(["rule set", "games", "verdict", "interval", "why"], rows)
    met = [(n, s) for n, s in states.items() if s["state"] == "met"]
    out = [(n, s) for n, s in states.items() if s["state"] not in ("met", "open", "cap", "failed")]
    open_ = [(n, s) for n, s in states.items() if s["state"] in ("open", "cap", "failed")]
    lines = ["", "## Search", "",
             f"Wanted: {rule.describe()} within [{rule.low:g}, {rule.high:g}], over "
             f"{', '.join(f'`{a.name}`' for a in cfg.axes)} ({len(states)} candidates, strategy `{rule.strategy}`"
             + (f", the figure taken as {rule.monotone} in the parameter" if rule.monotone else "") + "). "
             f"Each candidate's interval is a {level} {ci_name} (the error rate {rule.alpha:.3g} shared among the "
             f"candidates), so all the conclusions below hold together with probability {rule.confidence:.3g}. "
             f"{total} games in {seq['rounds']} rounds; a candidate played at most {rule.max_games}.", "",
             "**Values that meet the target:** " + (", ".join(f"`{n}` {_ci(s['interval'])} ({s['games']} games)"
                                                            for n, s in met) or "none found") + ".", ""]
    if open_:
        lines += ["**Still open** (the cap reached or games failed): "
                  + "; ".join(f"`{n}` ({s['games']} games): {s['reason'] or 'not decided'}" for n, s in open_) + ".", ""]
    lines += ["Ruled out:", ""]
    lines += _table(["value", "games", "verdict", "interval", "why"],
                    [[f"`{n}`", str(s["games"]), s["state"], _ci(s["interval"]), s["reason"]] for n, s in out])
    return lines


def _ci(ci: dict | None) -> str:
    if not ci or ci.get("mean") is None or ci.get("low") is None:
        return "-"
    return f"{ci['mean']:.3g} [{ci['low']:.3g}, {ci['high']:.3g}]"
