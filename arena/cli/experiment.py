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
    concurrency: Optional[int] = typer.Option(None, "--concurrency", "-j", min=1, help="Worker processes."),
    deals: Optional[Path] = typer.Option(None, "--deals", metavar="BOOK",
                                         help="A deal book (JSON lines, `arena deals make`): group i plays deal i "
                                              "under every rule set (overrides the file's)."),
    charts: bool = typer.Option(True, "--charts/--no-charts", help="Draw the PNG charts."),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Show the progress bar."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
) -> None:
    """Play the same seeded deals under several rule sets and compare them: report.md, charts, games.csv.

    Every game is stored as it finishes: after Ctrl-C or a crash, the same command continues
    where it stopped. Without --progress a line is printed every ten seconds.
    """
    from ..experiment import load_experiment, run_experiment
    from ..experiment.report import write_report

    cfg = load_experiment(file).with_overrides(output=output, concurrency=concurrency, games=games,
                                                      deals=deals)
    run = run_experiment(cfg, progress=progress, echo=lambda t: typer.echo(t, err=True))
    comp = write_report(cfg, run, charts=charts)
    out = Path(cfg.base.output)
    if as_json:
        emit_json({"output": str(out), "games": len(run["rows"]), "played": run["played"], "failed": run["failed"],
                   "elapsed_s": run["elapsed_s"], "games_per_s": run["games_per_s"], **comp})
        return
    typer.echo(f"{len(run['rows'])} games under {len(cfg.rule_sets)} rule sets; {run['played']} played in "
               f"{run['elapsed_s']:.1f} s ({run['games_per_s']:.1f} games/s on {run['concurrency']} workers)"
               + (f"; {len(run['failed'])} games failed" if run["failed"] else ""))
    for name in comp["rule_sets"]:
        s = comp["summaries"][name]
        wins = ", ".join(f"{w['rate']:.0%}" for w in s["seat_wins"])
        typer.echo(f"  {name:16} rounds {s['rounds']['mean']:5.2f}  score {s['score']['mean']:6.2f}  "
                   f"seat wins {wins}  adjudicated {s['adjudicated']['rate']:.0%}  faults {s['faults']}")
    typer.echo(f"report: {out / 'report.md'}")
