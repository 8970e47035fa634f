"""``arena experiment``: the same deals under several rule sets, compared in a report."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from .app import command, emit_json


@command("experiment")
def experiment_cmd(
    file: Path = typer.Argument(..., help="An experiment file (YAML) with rule_sets, e.g. tournaments/house-rules.yaml."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Output folder (overrides the file's)."),
    games: Optional[int] = typer.Option(None, "--games", min=1, help="Games per rule set (overrides the file's)."),
    seats: Optional[int] = typer.Option(None, "--seats", min=1, max=4, help="Players per game (overrides the file's; "
                                                                           "at most the number of bots)."),
    concurrency: Optional[int] = typer.Option(None, "--concurrency", "-j", min=1, help="Worker processes."),
    deals: Optional[Path] = typer.Option(None, "--deals", metavar="BOOK",
                                         help="A deal book (JSON lines, `arena deals make`): group i plays deal i "
                                              "under every rule set (overrides the file's)."),
    dask: Optional[str] = typer.Option(None, "--dask", metavar="ADDRESS",
                                       help="Play on the Dask cluster of this scheduler (tcp://host:8786) "
                                            "instead of local worker processes."),
    charts: bool = typer.Option(True, "--charts/--no-charts", help="Draw the PNG charts."),
    strength_games: int = typer.Option(4, "--strength-games", min=0, metavar="GROUPS",
                                       help="Seat-rotated groups each built-in bot plays against greedy to state its "
                                            "strength in the report (0: do not measure)."),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Show the progress bar."),
    check: bool = typer.Option(False, "--check", help="Validate the file (sweep, until, target included) and list "
                                                      "its rule sets; play nothing."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
    as_csv: bool = typer.Option(False, "--csv", help="Print the per-rule-set summary as CSV (every game is in games.csv)."),
) -> None:
    """Play the same seeded deals under several rule sets and compare them: report.md, charts, games.csv.

    Every game is stored as it finishes: after Ctrl-C or a crash, the same command continues
    where it stopped. Without --progress a line is printed every ten seconds.
    """
    from ..errors import UsageError
    from ..experiment import load_experiment, run_experiment
    from ..experiment.report import write_report

    if as_json and as_csv:
        raise UsageError("give --json or --csv, not both")
    cfg = load_experiment(file).with_overrides(output=output, concurrency=concurrency, games=games,
                                                      deals=deals, dask=dask, seats=seats)
    from ..experiment.strength import kept_strengths, weak

    if check:
        stop = cfg.stop
        how = (f"at most {stop.max_games} games per rule set, stopped by its {stop.kind}" if stop is not None
               else f"{cfg.base.games} games per rule set")
        names = [rs.name for rs in cfg.rule_sets]
        shown = ", ".join(names[:8]) + (f", ... ({len(names) - 8} more)" if len(names) > 8 else "")
        typer.echo(f"{file}: valid experiment. {cfg.name}: {len(names)} rule sets ({shown}); reference "
                   f"{names[0]}; {len(cfg.base.bots)} bots, {cfg.base.seats} seats, {how}")
        return
    run = run_experiment(cfg, progress=progress, echo=lambda t: typer.echo(t, err=True))
    strength = kept_strengths(cfg, strength_games)
    comp = write_report(cfg, run, charts=charts, strength=strength)
    out = Path(cfg.base.output)
    if as_json:
        emit_json({"output": str(out), "games": len(run["rows"]), "played": run["played"], "failed": run["failed"],
                   "elapsed_s": run["elapsed_s"], "games_per_s": run["games_per_s"], **comp,
                   "sequential": run.get("sequential"), "strength": strength})
        return
    if as_csv:
        typer.echo(summary_csv(comp), nl=False)
        return
    typer.echo(f"{len(run['rows'])} games under {len(cfg.rule_sets)} rule sets; {run['played']} played in "
               f"{run['elapsed_s']:.1f} s ({run['games_per_s']:.1f} games/s on {run['concurrency']} workers)"
               + (f"; {len(run['failed'])} games failed" if run["failed"] else ""))
    seq = (run.get("sequential") or {}).get("rule_sets", {})
    width = max([16] + [len(n) for n in comp["rule_sets"]])
    for name in comp["rule_sets"]:
        s = comp["summaries"][name]
        wins = ", ".join(f"{w['rate']:.0%}" for w in s["seat_wins"])
        stop = f"  {seq[name]['state']} after {seq[name]['games']} games" if name in seq else ""
        typer.echo(f"  {name:{width}} rounds {s['rounds']['mean']:5.2f}  score {s['score']['mean']:6.2f}  "
                   f"seat wins {wins}  adjudicated {s['adjudicated']['rate']:.0%}  faults {s['faults']}{stop}")
    if cfg.stop is not None and cfg.stop.kind == "target":
        met = [n for n, v in seq.items() if v["state"] == "met"]
        typer.echo(f"target met by: {', '.join(met) or 'none of the values tried'}; "
                   f"{sum(1 for v in seq.values() if v['state'] not in ('met', 'cap', 'open', 'failed'))} ruled out")
    for name, f in strength.items():
        share = "not measured" if f.get("points_share") is None else f"points share vs greedy {f['points_share']:.0%}"
        typer.echo(f"  bot {name}: {share}" + ("  (weak: see the report's warning)" if weak(name, f) else ""))
    typer.echo(f"report: {out / 'report.md'}")


def summary_csv(comp: dict) -> str:
    """One CSV row per rule set: means and rates of the printed summary, with 95% intervals."""
    import csv
    import io

    buf = io.StringIO()
    out = csv.writer(buf, lineterminator="\n")
    seats = max(len(comp["summaries"][n]["seat_wins"]) for n in comp["rule_sets"])
    out.writerow(["rule_set", "games", "rounds", "rounds_low", "rounds_high", "score", "score_low", "score_high",
                  "adjudicated", "faults"] + [f"seat{i}_wins" for i in range(seats)])
    for name in comp["rule_sets"]:
        s = comp["summaries"][name]
        out.writerow([name, s.get("games", ""), s["rounds"]["mean"], s["rounds"].get("low"), s["rounds"].get("high"),
                      s["score"]["mean"], s["score"].get("low"), s["score"].get("high"), s["adjudicated"]["rate"],
                      s["faults"]] + [w["rate"] for w in s["seat_wins"]])
    return buf.getvalue()
