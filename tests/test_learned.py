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


def train(folder, *args, threads: int = 1) -> subprocess.CompletedProcess:
    """``python -m bots.learned.train ARGS`` run in ``folder`` with a BLAS of ``threads`` threads."""
    import os

    env = {**os.environ, "OPENBLAS_NUM_THREADS": str(threads), "OMP_NUM_THREADS": str(threads),
           "MKL_NUM_THREADS": str(threads)}
    folder.mkdir(parents=True, exist_ok=True)
    return subprocess.run([sys.executable, "-m", "bots.learned.train", *args], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=600)


def test_the_weights_are_a_function_of_the_command_and_the_timings_a_separate_report(tmp_path):
    import json

    from bots.learned.model import Model

    args = ["--games", "4", "--dagger", "1", "--eval-games", "2", "--out", "w.npz"]
    files = []
    for k, threads in enumerate((1, 2)):
        out = train(tmp_path / f"run{k}", *args, threads=threads)
        assert out.returncode == 0, out.stderr
        files.append((tmp_path / f"run{k}" / "w.npz").read_bytes())
        report = json.loads((tmp_path / f"run{k}" / "w.report.json").read_text())
        assert report["train_cpu_s"] >= 0 and report["total_cpu_s"] >= report["train_cpu_s"]
    assert files[0] == files[1]
    model = Model.load(tmp_path / "run0" / "w.npz")
    assert np.any(model.weights != 0)
    assert not [k for k in json.dumps(model.meta).split('"') if k.endswith("cpu_s")]
    assert model.meta["command"] == "python -m bots.learned.train " + " ".join(args)


@pytest.mark.slow
def test_the_shipped_weights_are_what_their_command_makes(tmp_path):
    from bots.learned.model import DEFAULT_PATH, Model

    command = Model.load().meta["command"].split()
    assert command[:3] == ["python", "-m", "bots.learned.train"]
    out = train(tmp_path, *command[3:])
    assert out.returncode == 0, out.stderr
    made = tmp_path / command[command.index("--out") + 1]
    assert made.read_bytes() == DEFAULT_PATH.read_bytes()
