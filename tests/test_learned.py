"""The ``learned`` bot (bots/learned/): its weights ship with it, it plays whole games with
numpy only, its training command is deterministic and its fit recovers known weights."""

from __future__ import annotations

import random
import subprocess
import sys

import numpy as np
import pytest

from engine import Game, RuleSpec


def test_the_weights_ship_small_and_match_the_features():
    from bots.learned.features import NAMES
    from bots.learned.model import DEFAULT_PATH, Model

    assert DEFAULT_PATH.is_file() and DEFAULT_PATH.stat().st_size < 5_000_000
    model = Model.load()
    assert model.weights.shape == (len(NAMES),) and np.all(np.isfinite(model.weights))
    assert model.meta["command"].startswith("python -m bots.learned.train")
    assert model.meta["curve"][-1]["games"] >= 100


def test_it_is_a_registered_bot_and_plays_a_whole_game_without_torch():
    code = ("import random, sys\n"
            "from engine import Game, RuleSpec\n"
            "from arena.plugins import policy\n"
            "bots = [policy('learned'), policy('greedy')]\n"
            "game = Game.new(RuleSpec.make(['revised']), 2, 3)\n"
            "rng = random.Random(0)\n"
            "while not game.is_over:\n"
            "    game.apply(bots[game.to_move()].choose(game, rng))\n"
            "assert 'torch' not in sys.modules\n"
            "print(game.result()['scores'])\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("[")


def test_moves_are_reproducible_and_candidates_bounded():
    from bots.learned import MAX_CANDIDATES, LearnedPolicy, candidate_features

    game = Game.new(RuleSpec.make(["revised"]), 2, 11)
    bot = LearnedPolicy()
    for _ in range(12):
        if game.is_over:
            break
        a = bot.choose(game, random.Random(5))
        assert type(a) is type(bot.choose(game, random.Random(5))) and a == bot.choose(game, random.Random(5))
        actions, feats = candidate_features(game, random.Random(5))
        assert len(actions) <= MAX_CANDIDATES and feats.shape[0] == len(actions)
        game.apply(a)


def test_the_fit_recovers_a_known_ranking():
    from bots.learned.features import SIZE
    from bots.learned.train import fit

    rng = np.random.default_rng(0)
    true = rng.normal(size=SIZE)
    data = []
    for _ in range(300):
        feats = rng.normal(size=(int(rng.integers(2, 12)), SIZE))
        data.append((feats, int(np.argmax(feats @ true))))
    w, scale, loss, agree = fit(data, l2=1e-4)
    assert agree > 0.95
    cos = (w / scale) @ true / np.linalg.norm(w / scale) / np.linalg.norm(true)
    assert cos > 0.9


@pytest.mark.slow
def test_the_training_command_is_deterministic(tmp_path):
    from bots.learned.model import Model
    from bots.learned.train import main

    outs = []
    for k in range(2):
        out = tmp_path / f"w{k}.npz"
        assert main(["--games", "3", "--dagger", "1", "--eval-games", "0", "--out", str(out)]) == 0
        outs.append(Model.load(out).weights)
    assert np.array_equal(outs[0], outs[1]) and np.any(outs[0] != 0)
