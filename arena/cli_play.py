"""``arena play``: one game between bots, printed as a result (or JSON) and a replay file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import List, Optional

import typer

from .cli import command, emit_json
from .errors import UsageError
from .rulesopt import parse_rules


@command("play")
def play_cmd(
    bots: List[str] = typer.Argument(..., help="Bot names, one per seat (see `arena bots`)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the deal (R1.5)."),
    players: Optional[int] = typer.Option(None, "--players", min=1, max=4, help="Seats; the bots fill them in order, repeating if fewer."),
    rules: str = typer.Option("", "--rules", help="Variants, comma-separated, e.g. revised,ghost."),
    param: List[str] = typer.Option([], "--param", help="A rule parameter NAME=VALUE (repeatable), e.g. actions_per_turn=4."),
    deal: Optional[Path] = typer.Option(None, "--deal", help="JSON file with both decks' orders: {\"white\": [...], \"black\": [...]}."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as one JSON object."),
    replay: Optional[Path] = typer.Option(None, "--replay", help="Write the replay (JSON) to this file."),
) -> None:
    """Play one game and print the result: scores, ranking, rounds, adjudicated or not."""
    import random

    from bots.policy import names, policy
    from engine import Game, make_replay
    from engine.deal import load_deal

    spec = parse_rules(rules, param)
    n = players or max(len(bots), 2)
    if len(bots) > n:
        raise UsageError(f"{len(bots)} bots for {n} seats; give --players {len(bots)} or fewer bots")
    seats = [bots[i % len(bots)] for i in range(n)]
    known = names()
    for b in seats:
        if b not in known:
            raise UsageError(f"unknown bot {b!r} (built-in bots: {', '.join(known)})")
    deal_obj = load_deal(deal) if deal else None
    game = Game.new(spec, n, seed, deal_obj)
    policies = [policy(b) for b in seats]
    rngs = [random.Random(f"{seed}:{i}") for i in range(n)]
    while not game.is_over:
        s = game.to_move()
        game.apply(policies[s].choose(game, rngs[s]))
    result = {"seed": seed, "rules": spec.to_json(), "players": n, "bots": seats, **game.result()}
    if replay:
        record = make_replay(game, deal_obj, {"bots": seats})
        try:
            replay.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"cannot write the replay to {replay}: {exc.strerror}") from None
    if as_json:
        emit_json(result)
        return
    typer.echo(f"rules {spec.label()}, seed {seed}, {n} players, {result['rounds']} rounds"
               f"{' (adjudicated: max_rounds reached)' if result['adjudicated'] else ''}")
    typer.echo(f"{'seat':>4}  {'bot':12} {'score':>5} {'rank':>4} {'completed':>9}")
    for s in range(n):
        typer.echo(f"{s:>4}  {seats[s]:12} {result['scores'][s]:>5} {result['ranking'][s]:>4} {result['completed'][s]:>9}")
    if replay:
        typer.echo(f"replay written to {replay}")
