"""A scheduled game as the referee's request: what the runner, experiments and benchmarks
hand to an executor for one game of a tournament config."""

from __future__ import annotations

from pathlib import Path

from .config import TournamentConfig
from .schedule import GameTask


def build_request(cfg: TournamentConfig, task: GameTask, output: Path) -> dict:
    """The ``play_game`` request of one scheduled game."""
    seen: dict[str, int] = {}
    seats = []
    for name in task.bots:
        seen[name] = seen.get(name, 0) + 1
        label = name if seen[name] == 1 else f"{name}#{seen[name]}"
        seats.append(cfg.bot(name).seat_request(label))
    replay = output / "replays" / f"{task.group:06d}-{task.rotation}.json" if cfg.replays else None
    return {"seats": seats, "rules": cfg.rules.to_json(), "players": cfg.seats, "seed": task.seed, "deal": cfg.deal_for(task.group),
            "time_control": dict(cfg.time_control), "fault_policy": cfg.fault_policy, "sandbox": cfg.sandbox,
            "pause_idle": cfg.pause_idle, "replay_path": str(replay) if replay else None,
            "log_dir": str(output / "logs"), "private_paths": [str(output)], "fresh_process": cfg.fresh_process,
            "max_games_per_process": cfg.max_games_per_process}
