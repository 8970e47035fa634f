"""Contract: a built-in bot plays the same moves however it is run.

Every built-in bot of `arena bots` with an in-process policy and moves that do not read
the clock plays a round robin on the same seed and deals in-process, as bot processes
(``python -m bots.run NAME``, fed the JSON the protocol sends), and on a Dask
LocalCluster both ways; every game's moves must be the same in all four.
"""

from __future__ import annotations

import json
import random
from dataclasses import replace
from pathlib import Path

import pytest

from engine import Game, RuleSpec
from arena.tournament.config import BotEntry, TournamentConfig
from arena.tournament.runner import run_tournament
from arena.tournament.schedule import total_games
from arena.tournament.store import Store

#: bots left out, and why
NOT_REPRODUCIBLE = {
    "planner": "searches until its clock runs out, so its moves depend on the machine's load "
               "(planner-fast is the same search on a fixed budget, and is checked)",
}


def reproducible_bots() -> list[str]:
    """The built-in bots with an in-process policy, less the clock-reading ones."""
    from arena.plugins import policy_names

    return [b for b in policy_names() if b not in NOT_REPRODUCIBLE]


def config(output: Path, play: str, bots: list[str]) -> TournamentConfig:
    return TournamentConfig(
        name="same-moves", path="same-moves.yaml", rules=RuleSpec.make(["revised"]), seats=2,
        bots=tuple(BotEntry(b, b) for b in bots), format="round-robin", format_options={}, rounds=1, games=None,
        seed=31, time_control={"move_ms": 20000, "startup_ms": 60000}, fault_policy="forfeit", sandbox="none",
        concurrency=2, executor="local", address=None, play=play, output=output, anchor=bots[0], replays=True,
        pause_idle=False)


def moves(output: Path) -> dict:
    """Per stored game key: the bots by seat and every move of its replay."""
    store = Store.open(output, create=False)
    try:
        rows = store.conn.execute("SELECT key, replay_path FROM games").fetchall()
        faults = store.conn.execute("SELECT bot, verdict, detail FROM faults").fetchall()
    finally:
        store.close()
    assert not faults, faults
    out = {}
    for key, path in rows:
        record = json.loads(Path(path).read_text(encoding="utf-8"))
        out[key] = (record.get("bots"), record["actions"])
    return out


def test_every_built_in_bot_is_checked_or_excluded_for_a_reason():
    from arena.plugins import policy_names

    names = policy_names()
    assert {"random", "greedy", "planner-fast", "learned"} <= set(reproducible_bots())
    assert set(NOT_REPRODUCIBLE) <= set(names)


def test_in_process_and_bot_process_see_the_same_game_and_seed():
    """The in-process seat's random stream is seeded as the process's ``hello`` says."""
    from arena.referee import bot_seed
    from arena.execution.inprocess import play_inprocess

    request = {"seats": [{"name": "random", "bot": "random"}, {"name": "random#2", "bot": "random"}],
               "rules": RuleSpec.make(["revised"]).to_json(), "players": 2, "seed": 5, "deal": None,
               "replay_path": None}
    record = play_inprocess(request)
    game = Game.new(RuleSpec.make(["revised"]), 2, 5)
    from arena.plugins import policy

    rngs = [random.Random(bot_seed(5, i)) for i in range(2)]
    bots = [policy("random"), policy("random")]
    while not game.is_over:
        s = game.to_move()
        game.apply(bots[s].choose(game, rngs[s]))
    assert game.result() == record["result"]


def test_a_bot_process_knows_the_games_public_history():
    """A policy behind the protocol gets the history an in-process one reads (the planner's
    and learned's stalled-game term reads the last two rounds of it)."""
    from engine import action_to_json
    from engine.events import events_since
    from engine.observation import observation

    from bots.run import PolicyBot

    spec = RuleSpec.make(["revised"])
    game = Game.new(spec, 2, 9)
    rng = random.Random(0)
    bot = PolicyBot("random")
    bot.new_game({"rules": spec.to_json(), "players": 2, "seed": 1})
    seen = {0: 0, 1: 0}
    for _ in range(30):
        s = game.to_move()
        if s == 0:
            bot.events, seen[0] = events_since(game, 0, seen[0])
            assert bot.follow() == game.history
            bot.game(observation(game, 0))
        game.apply(rng.choice(game.legal_actions()))
    assert [action_to_json(game.rules, a) for _, a in game.history]


@pytest.mark.slow
def test_every_built_in_bot_plays_the_same_moves_in_process_as_a_process_and_on_a_cluster(tmp_path):
    from distributed import LocalCluster

    bots = reproducible_bots()
    runs = {}
    for play in ("inprocess", "bots"):
        cfg = config(tmp_path / f"local-{play}", play, bots)
        summary = run_tournament(cfg, progress=False)
        assert summary["played"] == total_games(cfg) == len(bots) * (len(bots) - 1)
        runs[f"local {play}"] = moves(cfg.output)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        for play in ("inprocess", "bots"):
            cfg = replace(config(tmp_path / f"dask-{play}", play, bots), executor="dask",
                          address=cluster.scheduler_address)
            run_tournament(cfg, progress=False)
            runs[f"dask {play}"] = moves(cfg.output)
    reference = runs["local inprocess"]
    assert len(reference) == len(bots) * (len(bots) - 1)
    for how, got in runs.items():
        assert got.keys() == reference.keys(), how
        for key in reference:
            ref_bots, ref_moves = reference[key]
            first = next((i for i, (a, b) in enumerate(zip(ref_moves, got[key][1])) if a != b),
                         None if len(ref_moves) == len(got[key][1]) else min(len(ref_moves), len(got[key][1])))
            assert first is None, (f"{how}: game {key} ({' vs '.join(ref_bots or [])}) leaves the in-process "
                                   f"moves at move {first}: {ref_moves[first:first + 1]} in-process, "
                                   f"{got[key][1][first:first + 1]} here")
