"""Golden replays: seeded games recorded in ``tests/data/golden/`` must re-simulate to the
same result and the same final state, bit for bit (see ``tests/data/make_golden.py``)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from engine import ReplayMismatch, resimulate
from engine.replay import load_replay, state_digest

GOLDEN = Path(__file__).parent / "data" / "golden"
FILES = sorted(GOLDEN.glob("*.json"))


def test_golden_replays_are_present():
    names = {p.stem for p in FILES}
    assert {"greedy_vs_greedy_2p", "greedy_vs_random_3p", "mixed_4p", "explicit_deal_2p"} <= names


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_golden_replay_reproduces_result_and_final_state(path):
    record = load_replay(path)
    game = resimulate(record)
    assert game.is_over
    assert game.result() == record["result"]
    assert state_digest(game) == record["final_digest"]
    assert len(game.history) == len(record["actions"])


def test_golden_set_covers_the_rules_it_should():
    kinds, deals, adjudicated, forfeits, players, finishing = set(), 0, 0, 0, set(), 0
    for path in FILES:
        record = json.loads(path.read_text())
        players.add(record["players"])
        deals += record["deal"] is not None
        adjudicated += record["result"]["adjudicated"]
        forfeits += any(record["result"]["forfeited"])
        for entry in record["actions"]:
            if "action" in entry:
                kinds.add(entry["action"]["type"])
                finishing += entry["action"]["type"] == "finish" and bool(entry["action"]["placements"])
    assert kinds == {"take_puzzle", "take_piece", "upgrade", "place", "master", "pass", "finish"}
    assert players == {2, 3, 4} and deals and adjudicated and forfeits and finishing


def test_a_tampered_golden_replay_is_caught():
    record = load_replay(GOLDEN / "greedy_vs_greedy_2p.json")
    bad = copy.deepcopy(record)
    bad["seed"] += 1
    with pytest.raises(ReplayMismatch):
        resimulate(bad)
    bad = copy.deepcopy(record)
    bad["result"]["scores"][0] += 1
    with pytest.raises(ReplayMismatch, match="result differs"):
        resimulate(bad)
    bad = copy.deepcopy(record)
    bad["final_digest"] = "0" * 64
    with pytest.raises(ReplayMismatch, match="digest mismatch"):
        resimulate(bad)
    bad = copy.deepcopy(record)
    bad["actions"] = bad["actions"][:-1]
    with pytest.raises(ReplayMismatch, match="the recorded game is over"):
        resimulate(bad)
