"""The MaskablePPO example (arena/rl/examples/maskable_ppo.py): it trains with self-play
snapshots and shaped rewards, writes its learning curve, and the saved model plays, in
process and as a protocol bot under `arena play`. Needs the learn extra (torch and
sb3-contrib): without it these tests skip, as the CI installs only the test extra."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch", reason="the learn extra is not installed (pip install '.[learn]')")
pytest.importorskip("sb3_contrib", reason="the learn extra is not installed (pip install '.[learn]')")

from arena.rl.examples import maskable_ppo  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    out = tmp_path_factory.mktemp("ppo")
    lines = []
    final = maskable_ppo.train(steps=256, out=out, eval_every=128, eval_games=2, snapshot_every=64, pool_size=2,
                               scale=0.1, seed=0, opponents=("random", "greedy"), log=lines.append, n_steps=128,
                               batch_size=64, imitation_games=4, imitation_epochs=2, dagger=1,
                               eval_play=("sample", "argmax"))
    return out, final, lines


def test_training_writes_checkpoints_and_a_learning_curve(trained):
    out, final, lines = trained
    assert final.is_file() and (out / "step_128.zip").is_file() and (out / "step_256.zip").is_file()
    rows = list(csv.DictReader((out / "curve.csv").open()))
    assert [int(r["steps"]) for r in rows] == [0, 128, 256]
    for r in rows:
        for play in ("", "argmax_"):  # sampled and most-probable play, each its own columns
            for opp in ("random", "greedy"):
                assert sum(int(r[f"{play}{opp}_{k}"]) for k in ("won", "tied", "lost")) == 2
    assert float(rows[-1]["train_cpu_s"]) > 0
    assert any("self@" in line for line in lines)  # snapshots of the learner were drawn as opponents
    fits = [line for line in lines if line.startswith("imitation epoch")]
    assert len(fits) == 2 + 1  # two passes, then one more on the data the learner's moves led to
    assert int(fits[-1].split()[-2]) > int(fits[0].split()[-2])  # the DAgger round added decisions


def test_a_run_may_start_from_a_saved_model(trained, tmp_path):
    import torch
    from sb3_contrib import MaskablePPO

    _, final, _ = trained
    maskable_ppo.train(steps=64, out=tmp_path, eval_every=64, eval_games=1, snapshot_every=64, pool_size=1,
                       scale=0.1, seed=5, opponents=("random",), log=lambda _l: None, n_steps=64, batch_size=32,
                       init=final)
    start = MaskablePPO.load(tmp_path / "step_0.zip", device="cpu").policy.state_dict()
    saved = MaskablePPO.load(final, device="cpu").policy.state_dict()
    assert start.keys() == saved.keys() and all(torch.equal(start[k], saved[k]) for k in start)
    after = MaskablePPO.load(tmp_path / "final.zip", device="cpu").policy.state_dict()
    assert not all(torch.equal(after[k], saved[k]) for k in after)  # and it trained from there


def test_imitation_data_holds_the_teachers_legal_indices():
    xs, masks, ys = maskable_ppo.imitation_data(2)
    assert len(xs) == len(masks) == len(ys) > 50
    assert masks[np.arange(len(ys)), ys].all()  # every recorded index was legal where it was taken
    assert xs.min() >= -1 and xs.max() <= 1

    def first_legal(obs, mask):
        return int(np.flatnonzero(mask)[0])

    first_legal.observation = "universal"
    mixed = maskable_ppo.imitation_data(2, learner=first_legal, mix=0.5)
    assert 0 < len(mixed[2]) and mixed[1][np.arange(len(mixed[2])), mixed[2]].all()
    assert not np.array_equal(mixed[2][:len(ys)], ys[:len(mixed[2])])  # other states, other labels


def test_the_saved_model_plays_in_process_on_other_tables(trained):
    _, final, _ = trained
    policy = maskable_ppo.load_policy(str(final))
    assert policy.observation == "universal"
    for rules, players in (("", 2), ("revised,ghost", 3), ("solo", 1)):
        opponent = "greedy" if players > 1 else None
        if opponent is None:
            continue
        res = maskable_ppo.evaluate(policy, opponent, games=1, rules=rules, players=players)
        assert res["won"] + res["tied"] + res["lost"] == 1


@pytest.mark.slow
def test_the_saved_model_enters_arena_play_as_a_protocol_bot(trained):
    _, final, _ = trained
    # bots may run as another user: the model must be readable by them (pytest's folders are not)
    shared = Path(tempfile.mkdtemp(prefix="arena-ppo-"))
    shared.chmod(0o755)
    model = shared / "final.zip"
    shutil.copy(final, model)
    model.chmod(0o644)
    cmd = f"{sys.executable} -m arena.rl.policy_bot arena.rl.examples.maskable_ppo:load_policy {model}"
    out = subprocess.run([sys.executable, "-m", "arena.cli", "play", "random", "--cmd", cmd, "--json", "--sandbox",
                          "none", "--startup-ms", "120000", "--seed", "2"],
                         capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert out.returncode == 0, out.stderr
    res = json.loads(out.stdout)
    assert res["faults"] == [[], []] and res["times"][1]["moves"] > 5
    shutil.rmtree(shared)
