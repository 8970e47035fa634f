"""An experiment's output: ``report.md`` (tables side by side), PNG charts, ``games.csv``, ``summary.json``."""

from __future__ import annotations

import csv
import json
from contextlib import contextmanager
from pathlib import Path

from ..errors import UsageError
from .actions import report_lines as action_report_lines
from .config import ExperimentConfig
from .markdown import table as _table
from engine.stats import compare

CHARTS = ("seat-wins.png", "scores.png", "rounds.png", "completed.png")


def write_csv(path: Path, rows: list[dict]) -> None:
    """Per-game rows; the columns are the union of every row's, in first-seen order."""
    fields: list[str] = []
    for r in rows:
        for k in r:
            if k not in fields:
                fields.append(k)
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=fields, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)


def _pct(x: dict) -> str:
    if x.get("rate") is None:
        return "-"
    return f"{x['rate']:.1%} [{x['low']:.1%}, {x['high']:.1%}]"


def _mean(x: dict | None, digits: int = 2, sign: bool = False) -> str:
    if not x or x.get("mean") is None:
        return "-"
    f = f"{{:{'+' if sign else ''}.{digits}f}}"
    return f"{f.format(x['mean'])} [{f.format(x['low'])}, {f.format(x['high'])}]"


def render_markdown(cfg: ExperimentConfig, run: dict, comp: dict, charts: list[str], extra: dict | None = None) -> str:
    """The Markdown report (``extra``: the sweep's table, the bots' strength)."""
    extra = extra or {}
    names = comp["rule_sets"]
    sums = comp["summaries"]
    base = cfg.base
    lines = [f"# Experiment: {cfg.name}", ""]
    if cfg.description:
        lines += [cfg.description.strip(), ""]
    bots = ", ".join(b.name + (f" ({b.bot})" if b.bot and b.bot != b.name else "") for b in base.bots)
    per = (f"up to {cfg.stop.max_games} games per rule set (stopped as below)" if cfg.stop is not None
           else f"{run['scheduled'] // max(1, len(names))} games per rule set")
    lines += [f"Bots: {bots}; {base.seats} seats; {per} in "
              f"seat-rotated groups, the same seeded deals under every rule set (seed {base.seed}).",
              f"Played {len(run['rows'])} games in {run['elapsed_s']:.1f} s on {run['concurrency']} workers: "
              f"**{run['games_per_s']:.1f} games/s**" + (f"; {len(run['failed'])} games failed" if run["failed"] else "")
              + ".", "",
              "Intervals are 95%: Wilson for rates (a shared first place is half a win), normal over seat-rotated "
              "groups for means.", "", "## Rule sets", ""]
    shown = {rs.name: rs for rs in cfg.rule_sets}
    if len(names) <= 40:
        lines += _table(["rule set", "variants", "parameters"],
                        [[n, ", ".join(shown[n].spec.variants) or "base",
                          ", ".join(f"{k}={v}" for k, v in shown[n].spec.params) or "-"] for n in names])
    else:
        lines += [f"{len(names)} rule sets; each one's variants and parameters are in summary.json."]
    if extra.get("strength"):
        from .strength import report_lines as strength_lines

        lines += strength_lines(extra["strength"])
    if run.get("sequential"):
        from .sweep_report import sequential_lines

        lines += sequential_lines(cfg, run["sequential"])
    if extra.get("sweep"):
        from .sweep_report import sweep_lines

        lines += sweep_lines(cfg, extra["sweep"], charts)
    seats = max((s["seats"] for s in sums.values()), default=0)
    rows = []
    for s in range(seats):
        rows.append([f"seat {s} wins"] + [_pct(sums[n]["seat_wins"][s]) if s < sums[n]["seats"] else "-" for n in names])
    rows += [
        ["score, mean"] + [_mean(sums[n]["score"]) for n in names],
        ["score, sd"] + [f"{sums[n]['score']['sd']:.2f}" if sums[n]["score"]["sd"] is not None else "-" for n in names],
        ["score, min / median / max"] + [f"{sums[n]['score'].get('min', '-')} / {sums[n]['score'].get('median', '-')} / "
                                         f"{sums[n]['score'].get('max', '-')}" for n in names],
        ["winning score"] + [_mean(sums[n]["winning_score"]) for n in names],
        ["rounds"] + [_mean(sums[n]["rounds"]) for n in names],
        ["rounds, sd"] + [f"{sums[n]['rounds']['sd']:.2f}" if sums[n]["rounds"]["sd"] is not None else "-" for n in names],
        ["white puzzles completed per player"] + [_mean(sums[n]["completed_white"]) for n in names],
        ["black puzzles completed per player"] + [_mean(sums[n]["completed_black"]) for n in names],
        ["adjudicated (max_rounds)"] + [_pct(sums[n]["adjudicated"]) for n in names],
        ["faults (games with any)"] + [f"{sums[n]['faults']} ({_pct(sums[n]['games_with_faults'])})" for n in names],
        ["forfeited seats"] + [str(sums[n]["forfeits"]) for n in names],
        ["games"] + [str(sums[n]["games"]) for n in names],
    ]
    if len(names) <= 12:
        lines += ["", "## Side by side", ""] + _table(["figure"] + names, rows)
    bots_all = sorted({b for n in names for b in sums[n]["bots"]})
    if len(bots_all) > 1:
        lines += ["", "## Bots", "", "Win rate (mean score) of each bot under each rule set.", ""]
        lines += _table(["bot"] + names, [[b] + [f"{_pct(sums[n]['bots'][b]['win'])} ({sums[n]['bots'][b]['mean_score']:.1f})"
                                                 if b in sums[n]["bots"] else "-" for n in names] for b in bots_all])
    if comp["paired"]:
        metrics = list(next(iter(comp["paired"].values())))
        lines += ["", f"## Paired differences against `{names[0]}`", "",
                  "Each game against the game of the same deal and seats under the first rule set; an interval "
                  "that excludes 0 is a difference the games show.", ""]
        lines += _table(["rule set"] + metrics,
                        [[n] + [_mean(comp["paired"][n][m], sign=True) for m in metrics] for n in comp["paired"]])
        for n in comp.get("identical", []):
            lines += ["", f"Every game under `{n}` ended exactly as under `{names[0]}` (same scores, ranks and length): "
                      f"the bots never used what `{n}` changes, so these games cannot measure it."]
    lines += action_report_lines(run["rows"], comp)
    if charts:
        lines += ["", "## Charts", ""] + [f"![{c[:-4]}]({c})" for c in charts if not c.startswith("sweep-")]
    if run["failed"]:
        lines += ["", "## Games not played", ""] + [f"- {f}" for f in run["failed"][:50]]
    lines += ["", "Per-game rows: [games.csv](games.csv); figures as JSON: [summary.json](summary.json).", ""]
    return "\n".join(lines)


def _errs(items: list[dict], key: str, lo: str, hi: str):
    vals = [x[key] if x[key] is not None else 0.0 for x in items]
    low = [v - (x[lo] if x[lo] is not None else v) for v, x in zip(vals, items)]
    high = [(x[hi] if x[hi] is not None else v) - v for v, x in zip(vals, items)]
    return vals, [low, high]


def write_charts(out: Path, comp: dict, rows_by: dict[str, list[dict]]) -> list[str]:
    """The PNG charts (matplotlib, no display needed); returns their file names."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    names = comp["rule_sets"]
    sums = comp["summaries"]
    x = np.arange(len(names))
    made = []

    @contextmanager
    def chart(name: str):
        """A figure sized for the rule sets, saved as ``name`` when the block ends."""
        fig, ax = plt.subplots(figsize=(max(6, 1.6 * len(names) + 2), 4))
        try:
            yield ax
            fig.tight_layout()
            fig.savefig(out / name, dpi=90)
            made.append(name)
        finally:
            plt.close(fig)

    seats = max(s["seats"] for s in sums.values())
    with chart("seat-wins.png") as ax:
        width = 0.8 / max(1, seats)
        for s in range(seats):
            items = [sums[n]["seat_wins"][s] if s < sums[n]["seats"] else {"rate": None, "low": None, "high": None}
                     for n in names]
            vals, err = _errs(items, "rate", "low", "high")
            ax.bar(x + (s - (seats - 1) / 2) * width, vals, width, yerr=err, capsize=3, label=f"seat {s}")
        if seats > 1:
            ax.axhline(1 / seats, color="grey", lw=0.8, ls="--")
        ax.set_xticks(x, names)
        ax.set_ylabel("win rate (95% Wilson)")
        ax.set_title("Win rate by seat")
        ax.legend()

    with chart("scores.png") as ax:
        data = [[r[f"seat{s}_score"] for r in rows_by[n] for s in range(sums[n]["seats"])] for n in names]
        ax.boxplot(data, showmeans=True)
        ax.set_xticks(x + 1, names)
        ax.set_ylabel("score per player")
        ax.set_title("Scores (box: quartiles, triangle: mean)")

    with chart("rounds.png") as ax:
        vals, err = _errs([sums[n]["rounds"] for n in names], "mean", "low", "high")
        ax.bar(x, vals, 0.6, yerr=err, capsize=4, color="tab:green")
        ax.set_xticks(x, names)
        ax.set_ylabel("rounds (mean, 95% interval)")
        ax.set_title("Game length")

    with chart("completed.png") as ax:
        for k, (key, colour, label) in enumerate((("completed_white", "#d9d9d9", "white"),
                                                  ("completed_black", "#333333", "black"))):
            vals, err = _errs([sums[n][key] for n in names], "mean", "low", "high")
            ax.bar(x + (k - 0.5) * 0.4, vals, 0.4, yerr=err, capsize=3, color=colour, edgecolor="black", label=label)
        ax.set_xticks(x, names)
        ax.set_ylabel("puzzles completed per player")
        ax.set_title("Puzzles completed by colour")
        ax.legend()
    return made


def write_report(cfg: ExperimentConfig, run: dict, charts: bool = True, strength: dict | None = None) -> dict:
    """Write the report, charts, CSV and JSON into the experiment's output folder; returns the comparison.

    ``strength``: the bots' measured strength (:mod:`.strength`), reported with a warning
    when a bot is weak."""
    out = Path(cfg.base.output)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot create the output folder {out}: {exc.strerror}") from None
    rows_by = {rs.name: [] for rs in cfg.rule_sets}
    for r in run["rows"]:
        rows_by[r["rule_set"]].append(r)
    if not any(rows_by.values()):
        raise UsageError("no game of the experiment was played; see the messages above")
    played = {n: rs_rows for n, rs_rows in rows_by.items() if rs_rows}
    comp = compare(played)
    write_csv(out / "games.csv", run["rows"])
    extra: dict = {"strength": strength}
    if cfg.axes:
        from .sweep_report import sweep_charts, sweep_table

        extra["sweep"] = sweep_table(cfg, comp, played, run.get("sequential"))
    made = []
    if charts:
        made = write_charts(out, comp, played) if len(played) <= 12 else []
        if extra.get("sweep"):
            made += sweep_charts(out, cfg, extra["sweep"])
    (out / "report.md").write_text(render_markdown(cfg, run, comp, made, extra), encoding="utf-8")
    summary = {"name": cfg.name, "games_per_s": run["games_per_s"], "elapsed_s": run["elapsed_s"],
               "concurrency": run["concurrency"], "failed": run["failed"],
               "rules": {rs.name: rs.spec.to_json() for rs in cfg.rule_sets}, **comp,
               "sweep": extra.get("sweep"), "sequential": run.get("sequential"), "strength": strength}
    (out / "summary.json").write_text(json.dumps(summary, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return comp
