"""``arena variants``, ``arena plugins`` and ``arena solo``: rule variants and plugins."""

from __future__ import annotations

import json
import random
from typing import List, Optional

import typer

from .app import command, emit_json
from ..errors import UsageError
from .options import parse_rules
from ..botspec.spec import MAX_MS


#: this project's distribution: its plugins are the built-in ones
DISTRIBUTION = "project-l-arena"


def _param_rows(specs) -> list[dict]:
    return [{"name": p.name, "default": p.default, "description": p.description} for p in specs]


@command("variants")
def variants_cmd(as_json: bool = typer.Option(False, "--json", help="Print as JSON.")) -> None:
    """List the rule variants with their parameters and defaults (and the base parameters, R13)."""
    from engine.rules import BASE_PARAM_SPECS
    from engine.variants import available, plugin_manager

    pm = plugin_manager()
    found = available()
    rows = []
    for name in sorted(found):
        v = found[name]
        rows.append({"name": name, "description": v.description, "plugin": pm.get_name(v.plugin),
                     "params": _param_rows(v.params), "overrides": v.overrides,
                     "incompatible": list(v.incompatible), "requires": list(v.requires)})
    if as_json:
        emit_json({"base_params": _param_rows(BASE_PARAM_SPECS), "variants": rows})
        return
    typer.echo("base rules — parameters (R13):")
    for p in _param_rows(BASE_PARAM_SPECS):
        typer.echo(f"  {p['name']:24} {json.dumps(p['default']):24} {p['description']}")
    for row in rows:
        typer.echo(f"\n{row['name']} — {row['description']}  [{row['plugin']}]")
        for p in row["params"]:
            typer.echo(f"  {p['name']:24} {json.dumps(p['default']):24} {p['description']}")
        for k, val in row["overrides"].items():
            typer.echo(f"  {k:24} {json.dumps(val):24} (changes the base default)")
        if row["incompatible"]:
            typer.echo(f"  cannot be combined with: {', '.join(row['incompatible'])}")
    typer.echo("\nCombine with --rules revised,ghost --param actions_per_turn=4 (or rules: in a tournament file).")


@command("plugins")
def plugins_cmd(as_json: bool = typer.Option(False, "--json", help="Print as JSON.")) -> None:
    """List every loaded plugin (built-in and installed) with the hooks it implements."""
    from ..plugins import plugin_manager

    pm = plugin_manager()
    dists = {id(plugin): dist for plugin, dist in pm.list_plugin_distinfo()}
    rows = []
    for name, plugin in sorted(pm.list_name_plugin(), key=lambda item: item[0]):
        hooks = sorted(caller.name for caller in (pm.get_hookcallers(plugin) or []))
        dist = dists.get(id(plugin))
        project = dist.metadata["name"] if dist is not None else None
        rows.append({"name": name, "hooks": hooks,
                     "builtin": project == DISTRIBUTION,
                     "distribution": project, "version": dist.version if dist is not None else None,
                     "module": getattr(plugin, "__name__", type(plugin).__name__)})
    if as_json:
        emit_json(rows)
        return
    for row in rows:
        source = f"{row['distribution']} {row['version']}" if row["distribution"] else "registered at run time"
        typer.echo(f"{row['name']:24} {source:28} {', '.join(row['hooks'])}")


@command("solo")
def solo_cmd(
    bot: Optional[str] = typer.Argument(None, help="A built-in bot (played in-process): random, greedy, ..."),
    cmd: Optional[str] = typer.Option(None, "--cmd", metavar="COMMAND",
                                      help="Your own bot, as a command line (e.g. \"python3 my_bot.py\"), played "
                                           "as a process under the time control and sandbox, instead of BOT."),
    move_ms: int = typer.Option(1000, "--move-ms", min=1, max=MAX_MS, metavar="MS", help="With --cmd: time limit of one move."),
    sandbox: str = typer.Option("auto", "--sandbox", metavar="TIER",
                                help="With --cmd: auto (the strongest tier here), none, basic or strict."),
    difficulty: str = typer.Option("standard", "--difficulty", help="standard, challenging or unbeatable (R12.1)."),
    games: int = typer.Option(100, "--games", min=1, help="Games to play (seeds seed, seed+1, ...)."),
    seed: int = typer.Option(0, "--seed", help="First seed."),
    rules: str = typer.Option("", "--rules", help="Further variants to combine with solo, e.g. ghost."),
    param: List[str] = typer.Option([], "--param", help="A rule parameter NAME=VALUE (repeatable)."),
    as_json: bool = typer.Option(False, "--json", help="Print the figures as one JSON object."),
) -> None:
    """Play a bot against the solo automaton (R12) and print its win rate and mean score margin.

    A built-in bot plays in-process; your own bot plays with --cmd "python3 my_bot.py", as a
    process under the time control and sandbox (faults are counted and reported)."""
    from arena.plugins import policy, policy_names
    from engine import Game

    from engine.stats import mean_ci, wilson

    if (bot is None) == (cmd is None):
        raise UsageError("name a built-in bot or give your own with --cmd \"python3 my_bot.py\" (one of the two)")
    if bot is not None and bot not in policy_names():
        raise UsageError(f"unknown built-in bot {bot!r} (built-in bots: {', '.join(policy_names())})")
    extra = [v for v in rules.split(",") if v.strip()]
    spec = parse_rules(",".join(["solo"] + extra), list(param) + [f"difficulty={difficulty}"])
    wins = 0
    margins = []
    scores = []
    played = []
    if cmd is not None:
        from ..botspec import command_line
        from .game import play_solo_games

        if not cmd.strip():
            raise UsageError("--cmd needs a command line, e.g. --cmd \"python3 my_bot.py\"")
        mine = command_line(cmds=[cmd])[0]  # as typed here: relative paths, wrappers, shims
        bot = mine.name
        played = play_solo_games(mine, spec, games, seed, {"move_ms": move_ms}, sandbox,
                                 echo=lambda t: typer.echo(t, err=True))
    for i in range(games if cmd is None else 0):
        game = Game.new(spec, 1, seed + i)
        pol = policy(bot)
        rng = random.Random(f"solo:{seed + i}")
        while not game.is_over:
            game.apply(pol.choose(game, rng))
        played.append(game.result())
    for res in played:
        wins += res["won"]
        margins.append(res["margin"])
        scores.append(res["scores"][0])
    rate = wilson(wins, games)
    lo, hi = rate["low"], rate["high"]
    margin = mean_ci(margins)
    mean_margin = margin["mean"]
    out = {"bot": bot, "difficulty": difficulty, "games": games, "wins": wins, "win_rate": wins / games,
           "win_rate_ci95": [round(lo, 4), round(hi, 4)], "mean_margin": round(mean_margin, 3),
           "mean_margin_ci95": [round(margin["low"], 3), round(margin["high"], 3)],
           "mean_score": round(sum(scores) / games, 3), "rules": spec.to_json(),
           **({"faults": sum(len(r.get("faults") or []) for r in played)} if cmd is not None else {})}
    if as_json:
        emit_json(out)
        return
    typer.echo(f"{bot} vs the automaton ({difficulty}), {games} games, rules {spec.label()}")
    typer.echo(f"  win rate     {wins / games:6.1%}  (95% CI {lo:.1%} – {hi:.1%})")
    typer.echo(f"  mean margin  {mean_margin:+6.2f}  (95% CI {out['mean_margin_ci95'][0]:+.2f} – {out['mean_margin_ci95'][1]:+.2f})")
    typer.echo(f"  mean score   {out['mean_score']:6.2f}")
