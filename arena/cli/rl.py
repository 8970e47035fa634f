"""``arena bench env``: the reinforcement-learning environment's speed (needs the ``rl`` extra).

The measuring code is in :mod:`arena.rl.bench`; this command only prints its figures.
"""

from __future__ import annotations

import typer

from ..errors import UsageError
from .app import bench_app, emit_json, guarded, seats_note


@bench_app.command("env")
@guarded
def bench_env_cmd(
    games: int = typer.Option(40, "--games", min=1, help="Random games (actions sampled from the mask) to time."),
    rules: str = typer.Option("", "--rules", help="Variants, comma-separated (default: base rules)."),
    as_json: bool = typer.Option(False, "--json", help="Print the figures as one JSON object."),
) -> None:
    """Environment steps per second, actions sampled from the mask as the documented loop
    samples them, against the engine's own decisions per second on the same games.

    Each game is played by the PettingZoo environment of `arena.rl` with every index drawn
    by `action_space(agent).sample(mask)` (the whole loop is timed: last(), the sample,
    step()), and its moves are replayed by the engine alone (list the legal actions,
    apply the move). The two are timed game by game, interleaved (on a shared machine the
    speed drifts); of 5 passes, the one with the median ratio is printed, with the range.
    The wrapped env(), the JSON observation and the Gymnasium environment (against
    random; native and universal observation) are timed on the same deals. Needs
    `pip install '.[rl]'`.
    """
    try:
        import gymnasium  # noqa: F401
        import pettingzoo  # noqa: F401
    except ImportError as exc:
        raise UsageError(f"arena bench env needs the rl extra ({exc.name} is not installed): "
                         f"pip install '.[rl]'") from None
    from engine import RuleSpec

    from ..rl.bench import bench_env

    spec = RuleSpec.make([v for v in rules.split(",") if v])
    result = bench_env(games=games, spec=spec)
    if as_json:
        emit_json(result)
        return
    rate = result["engine_decisions_per_s"]
    typer.echo(f"rules {result['rules']}{seats_note(result)}: {result['games']} random games (actions sampled from "
               f"the mask), {result['engine_decisions']} engine decisions, {result['env_steps']} environment steps")
    typer.echo(f"  engine decisions/s (list + apply):                 {rate:>9,.0f}")
    rows = [("PettingZoo raw_env steps/s (last + sample + step):", result["env_steps_per_s"]),
            ("PettingZoo env() (wrapped) steps/s:", result["env_steps_per_s_wrapped"]),
            ("PettingZoo raw_env, JSON observation in infos:", result["env_steps_per_s_json"]),
            ("Gymnasium steps/s against random:", result["gym_steps_per_s"]),
            ("Gymnasium, universal observation:", result["gym_steps_per_s_universal"])]
    for label, value in rows:
        typer.echo(f"  {label:<50}{value:>9,.0f}  = {value / rate:.0%} of the engine's rate")
    typer.echo(f"  (the median of {result['passes']} passes of engine and raw_env, timed game by game, "
               f"interleaved; ratios {result['ratio_min']:.0%}-{result['ratio_max']:.0%})")
