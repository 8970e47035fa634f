"""``arena bench ...``: benchmarks that print measured figures (engine, protocol, tournament).

The measuring code is in :mod:`arena.bench`; these commands only print its figures.
"""

from __future__ import annotations

import typer

from ..errors import UsageError
from .app import bench_app, emit_json, guarded, seats_note


@bench_app.command("engine")
@guarded
def bench_engine_cmd(
    games: int = typer.Option(40, "--games", min=1, help="Recorded greedy games to replay."),
    rules: str = typer.Option("", "--rules", help="Variants, comma-separated (default: base rules)."),
    base_deals: bool = typer.Option(False, "--base-deals", help="Deal a variant's games the base game's cards, to "
                                    "measure the variant's machinery on the same states as the base rules."),
    as_json: bool = typer.Option(False, "--json", help="Print the figures as one JSON object."),
) -> None:
    """Engine decisions per second and legal-action listing time, on one core."""
    from engine import RuleSpec

    from ..bench.engine import bench_engine

    spec = RuleSpec.make([v for v in rules.split(",") if v])
    result = bench_engine(games=games, spec=spec, base_deals=base_deals)
    if as_json:
        emit_json(result)
        return
    typer.echo(f"rules {result['rules']}{seats_note(result)}: {result['decisions']} decisions from {result['games']} greedy games"
               f"{' on the base game deals' if base_deals else ''}")
    typer.echo(f"  engine decisions/s (list + apply): {result['decisions_per_s']:,.0f}")
    typer.echo(f"  same, caches cold:                 {result['cold_decisions_per_s']:,.0f}")
    typer.echo(f"  legal-action listing, median:      {result['enumerate_us_median']:.2f} us")
    typer.echo(f"  random-vs-random games/s:          {result['random_games_per_s']:,.1f}")


@bench_app.command("protocol")
@guarded
def bench_protocol_cmd(
    decisions: int = typer.Option(5000, "--decisions", min=10, help="Round trips of each kind."),
    as_json: bool = typer.Option(False, "--json", help="Print the figures as one JSON object."),
) -> None:
    """Decisions per second through the pipe with a trivial bot, next to a raw JSON-line echo."""
    from ..bench.protocol import bench_protocol

    result = bench_protocol(decisions)
    if as_json:
        emit_json(result)
        return
    typer.echo(f"request of {result['bytes']} bytes, {result['decisions']} round trips of each kind (best of 20 interleaved blocks)")
    typer.echo(f"  protocol, trivial bot:      {result['protocol_per_s']:>10,.0f} decisions/s")
    typer.echo(f"  raw JSON-line echo (floor): {result['echo_per_s']:>10,.0f} round trips/s")
    typer.echo(f"  protocol / echo:            {result['ratio']:>10.1%}")
    typer.echo(f"  bare pipe (pre-encoded):    {result['pipe_per_s']:>10,.0f} round trips/s")
    typer.echo(f"  protocol, Python SDK bot:   {result['sdk_per_s']:>10,.0f} decisions/s")
@bench_app.command("tournament")
@guarded
def bench_tournament_cmd(
    groups: int = typer.Option(48, "--groups", min=1, help="Seat-rotated groups per pairing."),
    repeat: int = typer.Option(5, "--repeat", min=1, help="Runs per concurrency; the fastest counts."),
    play: str = typer.Option("inprocess", "--play", help="inprocess (policies in the workers) or bots (the referee with bot processes)."),
    concurrency: str = typer.Option("1,2", "--concurrency", help="Worker counts to measure, comma-separated "
                                    "(e.g. 1,2,4,8,16; more than the cores shows whether anything serializes)."),
    sandbox: str = typer.Option("none", "--sandbox", help="The bot processes' tier: none, basic, strict or auto."),
    cgroups: bool = typer.Option(True, "--cgroups/--no-cgroups", help="--no-cgroups plays the bot processes "
                                 "without cgroups, as where none can be made (the polled stand-ins take their place)."),
    dask: bool = typer.Option(False, "--dask", help="Also play the games on a local Dask cluster of as many workers "
                                                     "as each concurrency and print its games/s beside the local executor's."),
    as_json: bool = typer.Option(False, "--json", help="Print the figures as one JSON object."),
) -> None:
    """Games per second of a fixed round robin at each concurrency, the runner's overhead and,
    with --play bots, where a game's CPU goes.

    Three copies of greedy play each other (two seats, base rules); every run goes into a
    fresh database. The same games are also played by bare processes (no runner at all):
    the machine's ceiling, printed beside the runner's games/s and speed-up. With --play
    bots the same games are also played in-process, run for run (the bot-process games/s
    as a share of the in-process games/s), and the CPU of a game is split: the referee (of
    it the transport: the pipes), the bots in the game, their start-up, the store; the
    referee's share is referee / (referee + bots).
    """
    from ..bench.tournament import SANDBOX_TIERS, bench_tournament

    if play not in ("inprocess", "bots"):
        raise UsageError(f"--play {play!r}: give inprocess or bots")
    if sandbox not in SANDBOX_TIERS:
        raise UsageError(f"--sandbox {sandbox!r}: give one of {', '.join(SANDBOX_TIERS)}")
    try:
        counts = tuple(int(c) for c in concurrency.split(",") if c.strip())
    except ValueError:
        counts = ()
    if not counts or not all(1 <= c <= 256 for c in counts):
        raise UsageError(f"--concurrency {concurrency!r}: give worker counts from 1 to 256, comma-separated, e.g. 1,2,4")
    result = bench_tournament(rounds=groups, play=play, repeat=repeat, dask=dask, concurrency=counts,
                              sandbox=sandbox, cgroups=cgroups)
    if as_json:
        emit_json(result)
        return
    _print_tournament(result)


def _print_tournament(result: dict) -> None:
    """The tables of ``arena bench tournament``."""
    steps = result["steps"]
    bots = result["play"] == "bots"
    where = f", sandbox {result['sandbox']}{'' if result['cgroups'] else ' without cgroups'}" if bots else ""
    typer.echo(f"round robin of {', '.join(result['bots'])}: {result['games']} games per run, {result['play']} play"
               f"{where}, best of {result['repeat']} runs")
    typer.echo(f"  {'workers':>7} {'games/s':>8} {'speed-up':>8} {'bare games/s':>12} {'bare speed-up':>13} "
               f"{'kept':>5} {'overhead':>8} {'CPU/game':>9}" + (f" {'in-process':>10} {'bots/in-proc':>12}" if bots else ""))
    for s in steps:
        row = (f"  {s['workers']:>7} {s['games_per_s']:>8.1f} {s['speedup']:>7.2f}x {s['bare_games_per_s']:>12.1f} "
               f"{s['bare_speedup']:>12.2f}x {s['kept_of_bare']:>5.0%} {s['overhead']:>8.1%} {s['cpu_ms_per_game']:>6.1f} ms")
        if bots:
            row += f" {s['inprocess_games_per_s']:>10.1f} {s['bots_vs_inprocess']:>12.1%}"
        typer.echo(row)
    if bots:
        typer.echo("  CPU of a game, ms (bare processes, the median of the runs; store: the runner's coordinator):")
        typer.echo(f"  {'workers':>7} {'referee':>8} {'transport':>9} {'bots':>6} {'start-up':>8} {'store':>6} "
                   f"{'referee share':>13}")
        for s in steps:
            typer.echo(f"  {s['workers']:>7} {s['referee_ms']:>8.2f} {s['transport_ms']:>9.2f} {s['bots_ms']:>6.2f} "
                       f"{s['startup_ms']:>8.2f} {s['store_ms_per_game']:>6.2f} {s['referee_share']:>13.1%}")
        typer.echo("  (referee: a game whose bots were running, the transport part of it; start-up: starting and "
                   "closing the pooled processes, per game of the run)")
    else:
        for s in steps:
            if s["cpu_overhead"] is not None:
                typer.echo(f"  concurrency {s['workers']}: runner overhead {s['cpu_overhead']:.1%} of CPU time")
    for s in steps:
        if "dask_vs_local" in s:
            n = s["workers"]
            typer.echo(f"  dask, {n} worker{'s' if n > 1 else ''} (LocalCluster): {s['dask_games_per_s']:.1f} games/s beside "
                       f"the local executor's {s['games_per_s']:.1f} games/s: {s['dask_vs_local']:.1%}; run for run: "
                       f"median {s['dask_vs_local_paired']:.1%} (from {s['dask_vs_local_range'][0]:.1%} to "
                       f"{s['dask_vs_local_range'][1]:.1%}); CPU per game, bots included: local "
                       f"{s['cpu_ms_per_game']:.1f} ms, dask {s['dask_cpu_ms_per_game']:.1f} ms "
                       f"({s['dask_cpu_ms_per_game'] / s['cpu_ms_per_game'] - 1:+.1%})")


@bench_app.command("experiment")
@guarded
def bench_experiment_cmd(
    games: int = typer.Option(60, "--games", min=2, help="Games of each measurement."),
    rules: str = typer.Option("revised", "--rules", help="Variants, comma-separated."),
    bots: str = typer.Option("greedy,greedy", "--bots", help="The two built-in bots, comma-separated."),
    runner: bool = typer.Option(True, "--runner/--no-runner", help="Also play through the runner at 1 and 2 workers."),
    as_json: bool = typer.Option(False, "--json", help="Print the figures as one JSON object."),
) -> None:
    """Experiment games per second per core (in-process path) and the share of time in the engine and the bots."""
    from ..bench.experiment import bench_experiment

    pair = tuple(b for b in bots.split(",") if b)
    if len(pair) != 2:
        raise UsageError(f"--bots {bots!r}: give two built-in bots, e.g. greedy,greedy")
    result = bench_experiment(games, tuple(v for v in rules.split(",") if v), pair, runner)
    if as_json:
        emit_json(result)
        return
    one = result["one_core"]
    typer.echo(f"experiment games, {' vs '.join(result['bots'])}, rules {result['rules']}, 2 seats, in-process")
    typer.echo(f"  one core, no runner: {one['games_per_cpu_s']:.1f} games/s per core ({one['games']} games, "
               f"{one['ms_per_game']:.1f} ms each)")
    typer.echo(f"  time of a game: engine {one['engine_share']:.0%}, bots {one['bots_share']:.0%}, "
               f"replay check {one['check_share']:.0%} (wall time; load average {one['load']:.1f})")
    for r in result.get("runner", []):
        typer.echo(f"  through the runner, {r['workers']} worker{'s' if r['workers'] > 1 else ''}: "
                   f"{r['games_per_s']:.1f} games/s ({r['games']} games, every row stored)")
    for pr in (result.get("processes"), result.get("processes_startup")):
        if not pr:
            continue
        who = (f"greedy vs a bot that takes {pr['startup_s']:g} s to start, sandbox {pr['sandbox']}"
               if pr.get("startup_s") else "greedy vs greedy")
        rep = pr["reported"]
        typer.echo(f"  bot processes, {who}, {pr['games']} games at {pr['workers']} workers: experiment "
                   f"{rep['experiment']:.1f} games/s, tournament {rep['tournament']:.1f} games/s as they report: "
                   f"{rep['ratio']:.0%} (by the commands' wall time {pr['ratio']:.0%}); a worker's first game "
                   f"{max(pr['first_games_s']['experiment']):.2f} s vs {max(pr['first_games_s']['tournament']):.2f} s")
    sc = result["scale"]
    typer.echo(f"  validate a sweep of {sc['cells']} rule sets: {sc['validate_s']:.2f} s; "
               f"one anytime interval over 1,000 groups: {sc['interval_ms']:.0f} ms")


@bench_app.command("schedule")
@guarded
def bench_schedule_cmd(
    as_json: bool = typer.Option(False, "--json", help="Print the figures as one JSON object."),
) -> None:
    """Time and peak memory of `arena validate` on generated big fields, and time to the first game.

    A round robin of 1,000 bots and a gauntlet and a Swiss of 10,000 (two seats, copies of
    the random bot) are written to a temporary folder and validated, each in a fresh
    process; then `arena run` is started on the gauntlet and timed until its first game is
    stored. Targets: under 5 s and 1 GB per validation, under 5 s to the first game.
    """
    from ..bench.schedule import bench_schedule

    result = bench_schedule()
    if as_json:
        emit_json(result)
        return
    for row in result["validate"]:
        typer.echo(f"  validate {row['format']} of {row['bots']:,} bots: {row['wall_s']:.2f} s ({row['cpu_s']:.2f} s CPU), "
                   f"peak {row['peak_mb']:.0f} MB, exit {row['exit']}: {row['said'][:160]}")
    first = result["first_game_s"]
    typer.echo("  arena run, 10,000-bot gauntlet: " + (f"first game stored after {first:.2f} s" if first is not None
                                                       else "no game stored within 60 s"))


@bench_app.command("serve")
@guarded
def bench_serve_cmd(
    clients: str = typer.Option("20,100", "--clients", help="Numbers of simulated visitors, comma-separated."),
    seconds: float = typer.Option(5.0, "--seconds", min=1, help="How long each load lasts."),
    play: str = typer.Option("on,off", "--play", help="Background play (through bot processes) during the load: "
                                                       "on, off or both (on,off)."),
    mix: str = typer.Option("light,real-visitor", "--mix", help="What visitors ask for: light (a dozen small "
                                                                 "pages), real-visitor (replay pages, bot pages and "
                                                                 "the live API), or both (light,real-visitor)."),
    think_ms: float = typer.Option(0.0, "--think-ms", min=0, help="Pause of a visitor between requests (0: none)."),
    games: int = typer.Option(200, "--games", min=0, help="Games played (each with its replay) before the server "
                                                          "starts."),
    hog: int = typer.Option(520, "--hog", min=0,
                            help="Also load the fewest visitors while one client holds this many idle and "
                                 "trickling sockets (0: skip)."),
    as_json: bool = typer.Option(False, "--json", help="Print the figures as one JSON object."),
) -> None:
    """Requests/s, MB/s and page latency (p50/p95/p99) of a real `arena serve` on 127.0.0.1, for the light pages
    and for what visitors really fetch (replay pages, bot pages, the live API), with the league playing through bot
    processes and not playing, and beside one client holding --hog sockets.

    A league of four built-in bots plays --games games in-process first (each with its replay), then the same bots
    as bot processes take their place: the games the server plays meanwhile are bot-process games, followed live."""
    import os

    from ..bench.serve import MIXES, bench_serve
    from ..bench.serve_load import KINDS

    try:
        counts = tuple(int(c) for c in clients.split(",") if c.strip())
    except ValueError:
        counts = ()
    if not counts or min(counts) < 1:
        raise UsageError(f"--clients {clients!r}: give numbers of visitors, comma-separated, e.g. 20,100")
    modes = tuple({"on": True, "off": False}.get(m.strip()) for m in play.split(",") if m.strip())
    if not modes or None in modes:
        raise UsageError(f"--play {play!r}: give on, off or on,off")
    mixes = tuple(m.strip() for m in mix.split(",") if m.strip())
    if not mixes or any(m not in MIXES for m in mixes):
        raise UsageError(f"--mix {mix!r}: give {', '.join(MIXES)} or both ({','.join(MIXES)})")
    if "real-visitor" in mixes and not games:
        raise UsageError("--mix real-visitor fetches the replays of stored games: give --games 1 or more")
    results = bench_serve(counts, seconds, modes, think_ms / 1000, games, hog=hog, mixes=mixes)
    if as_json:
        emit_json({"results": results, "cpus": os.cpu_count()})
        return
    typer.echo(f"arena serve on 127.0.0.1, {os.cpu_count()} cores, {seconds:g} s per load, visitors "
               f"{'without pause' if not think_ms else f'pausing {think_ms:g} ms'}, play through bot processes")
    typer.echo("  mixes: light = a dozen small pages, the same for every visitor; real-visitor = a game and its replay "
               "page, a bot's pages, the live API and a game in flight followed")
    typer.echo(f"{'':38}{'requests/s':>11}{'MB/s':>8}{'p50 ms':>9}{'p95 ms':>9}{'p99 ms':>9}{'errors':>8}"
               f"{'games stored':>14}{'load avg':>10}")

    def condition(r: dict) -> tuple:
        return r["play"], r["clients"], bool(r.get("hog"))

    for i, r in enumerate(results):
        after = results[i + 1] if i + 1 < len(results) else None
        if i == 0 or condition(results[i - 1]) != condition(r):
            typer.echo(f"  play {'on ' if r['play'] else 'off'} {r['clients']:>4} clients"
                       f"{' beside the hog' if r.get('hog') else ''}")
        typer.echo(f"    {r['mix']:<34}{r['requests_per_s']:>11.1f}{r['mb_per_s']:>8.2f}{r['p50_ms']:>9.1f}"
                   f"{r['p95_ms']:>9.1f}{r['p99_ms']:>9.1f}{r['errors']:>8}{r['games_played']:>14}"
                   f"{r['load_avg']:>10.1f}")
        if r["mix"] == "real-visitor":
            typer.echo("      " + "; ".join(
                f"{KINDS[k]} {f['requests']} ({f['kb_median']:.1f} KB median, {f['kb_per_answer']:.1f} KB mean, "
                f"p95 {f['p95_ms']:.1f} ms"
                + "".join(f", {n} answered {st}" for st, n in sorted(f["statuses"].items()) if st != "200") + ")"
                for k, f in r["kinds"].items()))
        for example in r["error_examples"]:
            typer.echo(f"      error: {example}")
        h = r.get("hog")
        if h and (after is None or condition(after) != condition(r)):
            typer.echo(f"      the hog, one client keeping {h['sockets']} sockets open ({h['trickling']} of them "
                       f"trickling a request head) through the loads above, held {h['held_median']} at once (median "
                       f"of samples); of its {h['opened']} connections {h['refused']} were refused at once and "
                       f"{h['shed']} closed after "
                       f"{h['shed_after_median_s'] if h['shed_after_median_s'] is not None else '-'} s (median)")
        if after is None or after["play"] != r["play"]:
            typer.echo(f"  play {'on' if r['play'] else 'off'}: the server stopped in {r['stop_s']:.1f} s")
