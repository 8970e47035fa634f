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
    games: int = typer.Option(40, "--games", min=1, help="Recorded greedy games to replay."),
    rules: str = typer.Option("", "--rules", help="Variants, comma-separated (default: base rules)."),
    as_json: bool = typer.Option(False, "--json", help="Print the figures as one JSON object."),
) -> None:
    """Environment steps per second (array observation and legal-action mask included)
    against the engine's own decisions per second, on the same recorded games, on one core.

    Every recorded greedy game is replayed twice: by the engine alone (list the legal
    actions, apply the recorded move) and through the PettingZoo environment of
    `arena.rl` (each move as its index sequence: env.step, then the observation array
    and mask of the agent to move). The two are timed game by game, interleaved (on a
    shared machine the speed drifts); of 5 passes, the one with the median ratio is
    printed, with the range of ratios. Needs `pip install '.[rl]'`.
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
    typer.echo(f"rules {result['rules']}{seats_note(result)}: {result['engine_decisions']} decisions from {result['games']} greedy games, "
               f"{result['env_steps']} environment steps")
    typer.echo(f"  engine decisions/s (list + apply):            {result['engine_decisions_per_s']:>9,.0f}")
    typer.echo(f"  env steps/s (step + array observation + mask): {result['env_steps_per_s']:>8,.0f}"
               f"  = {result['ratio']:.0%} of the engine's rate")
    typer.echo(f"  env steps/s with the JSON observation in info: {result['env_steps_per_s_json']:>8,.0f}")
    typer.echo(f"  (the median of {result['passes']} passes, engine and environment timed game by game, "
               f"interleaved; ratios {result['ratio_min']:.0%}-{result['ratio_max']:.0%})")
