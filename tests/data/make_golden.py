"""Write the golden replays in ``tests/data/golden/`` (run from the repository root).

    python tests/data/make_golden.py

Each file is a replay (:func:`engine.make_replay`) of one seeded game between built-in
bots, with its result and the digest of its final state. ``tests/test_golden.py``
re-simulates every file on every run: a change of the engine that changes any recorded
game shows up as a failing test. Regenerate the files only when the rules themselves
change on purpose, and say so in the commit message.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from arena.plugins import policy  # noqa: E402
from engine import Game, RuleSpec, action_from_json, make_replay  # noqa: E402

OUT = Path(__file__).resolve().parent / "golden"

#: An explicit deal: the whites in card order, the blacks from the highest-numbered down.
DEAL = {"white": [f"W{i:02}" for i in range(1, 33)], "black": [f"B{i:02}" for i in range(20, 8, -1)]}

#: A scripted opening (R14 JSON, or a forfeit) before the bots take over: a master
#: action on two puzzles, a take_piece, an upgrade, and a seat forfeited by the arena.
SCRIPT = [
    {"type": "take_puzzle", "color": "white", "slot": 0},
    {"type": "take_puzzle", "color": "white", "slot": 1},
    {"type": "master", "placements": [{"puzzle": "W01", "piece": "O1", "cells": [[1, 1]]},
                                      {"puzzle": "W02", "piece": "I2", "cells": [[1, 1], [2, 1]]}]},
    {"type": "take_piece"},
    {"type": "upgrade", "give": "O1", "take": "I2"},
    {"forfeit": 1},
]

#: name -> (bots, seed, rule parameters, deal, what the game shows[, scripted opening])
GAMES = {
    "greedy_vs_greedy_2p": (["greedy", "greedy"], 7, {}, None, "two greedy players, seed 7"),
    "greedy_vs_random_3p": (["greedy", "random", "random"], 11, {}, None, "greedy against two random players"),
    "mixed_4p": (["greedy", "random", "greedy", "random"], 3, {}, None, "four seats, two of each policy"),
    "explicit_deal_2p": (["greedy", "greedy"], 0, {}, DEAL, "both decks given as card ids"),
    "adjudicated_random_2p": (["random", "random"], 5, {"max_rounds": 12}, None, "max_rounds reached (R5.3)"),
    "scripted_master_forfeit_3p": (["greedy", "greedy", "random"], 1, {}, DEAL,
                                   "a scripted master action and a forfeit, then greedy play", SCRIPT),
}


def play(bots, seed, params, deal, script=()) -> dict:
    """Play ``script`` then the rest of the game the way ``arena play`` does; return the replay."""
    game = Game.new(RuleSpec.make((), params), len(bots), seed, deal)
    for step in script:
        if "forfeit" in step:
            game.forfeit(step["forfeit"])
        else:
            game.apply(action_from_json(game.rules, step))
    pols = [policy(b) for b in bots]
    rngs = [random.Random(f"{seed}:{i}") for i in range(len(bots))]
    while not game.is_over:
        s = game.to_move()
        game.apply(pols[s].choose(game, rngs[s]))
    return make_replay(game, deal, {"bots": bots})


def main() -> None:
    """Write every golden replay, one JSON file per game."""
    OUT.mkdir(parents=True, exist_ok=True)
    for name, (bots, seed, params, deal, about, *script) in GAMES.items():
        record = play(bots, seed, params, deal, *script)
        record["about"] = about
        path = OUT / f"{name}.json"
        path.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        print(f"{path.relative_to(ROOT)}: {len(record['actions'])} actions, result {record['result']}")


if __name__ == "__main__":
    main()
