"""Golden replays of the variants (``tests/data/golden_variants/``): re-simulating each
recorded game must reproduce every action, the result and the final state's digest.

The files are made by ``tests/data/make_golden_variants.py``; a failure here means the
rules now play differently: if that is intended, regenerate them and review the diff.
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path

import pytest

from engine import ReplayMismatch, resimulate
from engine.replay import load_replay

DATA = Path(__file__).parent / "data"
sys.path.insert(0, str(DATA))
from make_golden_variants import CASES, play  # noqa: E402

FILES = sorted((DATA / "golden_variants").glob("*.json"))


def test_every_case_has_a_golden_replay_and_no_file_is_stray():
    assert sorted(p.stem for p in FILES) == sorted(CASES)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_golden_replay_resimulates(path):
    record = load_replay(path)
    variants, players, params, deal, _, expect = CASES[path.stem]
    assert record["rules"]["variants"] == variants and record["players"] == players
    assert record["deal"] == deal
    game = resimulate(record)
    assert game.is_over and game.result() == record["result"]
    kinds = {type(a).__name__ for _, a in game.history if a is not None}
    assert set(expect) <= kinds
    if "solo" in variants:
        assert {"automaton_score", "margin", "won"} <= set(record["result"])


@pytest.mark.parametrize("change", ["drop_action", "other_result", "other_digest", "other_seed"])
def test_a_changed_golden_replay_is_detected(change):
    record = json.loads((DATA / "golden_variants" / "revised-2p.json").read_text())
    bad = copy.deepcopy(record)
    if change == "drop_action":
        del bad["actions"][len(bad["actions"]) // 2]
    elif change == "other_result":
        bad["result"]["scores"][0] += 1
    elif change == "other_digest":
        bad["final_digest"] = "0" * 64
    else:
        bad["seed"] += 1
    with pytest.raises(ReplayMismatch):
        resimulate(bad)


@pytest.mark.parametrize("name", ["ghost-2p", "solo-standard"])
def test_the_generator_is_deterministic(name):
    seed = CASES[name][4]
    assert play(name, seed).to_json() == play(name, seed).to_json()
