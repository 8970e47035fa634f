"""Generate the golden replays of the variants in ``tests/data/golden_variants/``.

Each case is a seeded game under some variants, played by the test suite's mixed policy
(greedy, random and the rarer variant actions: see ``tests/variant_helpers.py``). For each
case the first seed from ``seed`` on whose game contains every action kind in ``expect``
is kept, so each replay exercises what it is named after. The replay records the seed,
the rules, the deal, every action and the final digest; ``tests/test_variant_golden.py``
re-simulates them, so a change of rule behaviour shows up as a replay mismatch.

Run ``python tests/data/make_golden_variants.py`` after an intended rule change, and
review the diff of the JSON files.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "golden_variants"
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent.parent))

from engine import Game, RuleSpec, make_replay  # noqa: E402
from variant_helpers import choose  # noqa: E402

SMALL_WHITES = ["W09", "W22", "W10", "W27", "W24", "W31", "W23", "W11", "W12", "W13", "W14", "W15"]

#: name -> (variants, players, params, deal, first seed, action kinds the game must contain)
CASES = {
    "revised-2p": (["revised"], 2, {}, None, 1, ["Recycle", "TakeBlind"]),
    "revised-reward-fallback-2p": (["revised"], 2, {"reserve_per_shape": 3}, None, 1, ["Reward"]),
    "revised-open-scores-3p": (["revised", "open-scores"], 3, {}, None, 1, ["Recycle"]),
    "ghost-2p": (["ghost"], 2, {"ghost.reserve_per_shape": 4}, None, 1, ["LevelUp", "Ghost"]),
    "ghost-revised-4p": (["ghost", "revised"], 4, {}, None, 1, ["LevelUp", "TakeBlind"]),
    "no-master-2p": (["no-master"], 2, {}, None, 1, ["Place"]),
    "all-multiplayer-3p": (["revised", "open-scores", "ghost", "no-master"], 3, {}, None, 1, ["LevelUp", "Recycle"]),
    "solo-standard": (["solo"], 1, {}, None, 1, ["GridTake"]),
    "solo-unbeatable-ghost": (["solo", "ghost"], 1, {"difficulty": "unbeatable"}, None, 1, ["GridTake"]),
    "solo-dealt-challenging": (["solo"], 1, {"difficulty": "challenging"},
                               {"white": SMALL_WHITES, "black": ["B13", "B14", "B15"]}, 1, ["GridTake"]),
}


def play(name: str, seed: int):
    """Play case ``name`` with ``seed``; the finished game."""
    variants, players, params, deal, _, _ = CASES[name]
    game = Game.new(RuleSpec.make(variants, dict(params, max_rounds=40)), players, seed, deal)
    rng = random.Random(seed)
    while not game.is_over:
        game.apply(choose(game, rng, greedy_share=0.85, special_share=0.15))
    return game


def build(name: str) -> dict:
    """The replay record of case ``name`` (the first seed whose game has every expected kind)."""
    variants, players, params, deal, first, expect = CASES[name]
    for seed in range(first, first + 200):
        game = play(name, seed)
        kinds = {type(a).__name__ for _, a in game.history if a is not None}
        if set(expect) <= kinds:
            return make_replay(game, deal, {"case": name, "expect": expect})
    raise SystemExit(f"{name}: no seed in {first}..{first + 199} gives a game with {expect}")


def main() -> None:
    """Write every case's replay, one JSON file per case."""
    OUT.mkdir(exist_ok=True)
    for name in CASES:
        record = build(name)
        path = OUT / f"{name}.json"
        path.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        print(f"{path.relative_to(HERE.parent.parent)}: seed {record['seed']}, {len(record['actions'])} actions, "
              f"scores {record['result']['scores']}")


if __name__ == "__main__":
    main()
