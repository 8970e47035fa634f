"""The Swiss format: pairings by score, no repeats, seat balance, byes, round by round, resume."""

from __future__ import annotations

import hashlib
import os
import itertools
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from engine import RuleSpec
from arena.tournament.config import BotEntry, TournamentConfig, load_config
from arena.tournament.runner import run_tournament
from arena.tournament.schedule import WAIT, group_seed, total_games
from arena.tournament.standings import render_text, report
from arena.tournament.store import Store
from arena.tournament.swiss import SwissPlan, pair_round


def strength(name: str) -> int:
    return int(name[1:])


def fake_game(request: dict) -> dict:
    """Higher-numbered bots usually win (a little noise from the seed)."""
    names = [s["name"] for s in request["seats"]]
    noise = [int(hashlib.sha256(f"{request['seed']}:{n}".encode()).hexdigest(), 16) % 7 for n in names]
    value = [strength(n) + x for n, x in zip(names, noise)]
    order = sorted(range(len(names)), key=lambda i: -value[i])
    ranks = [0] * len(names)
    for r, i in enumerate(order):
        ranks[i] = r + 1
    return {"result": {"scores": [10 - r for r in ranks], "ranking": ranks, "completed": [0] * len(names)},
            "seats": [{"name": n, "faults": [], "moves": 1, "wall_ms": 1.0, "cpu_ms": 1.0, "max_move_ms": 1.0}
                      for n in names],
            "sandbox": {"tier": "none", "protections": []}, "replay_path": None, "duration_s": 0.0,
            "rules": {"variants": [], "params": {}}, "seed": request["seed"]}


def failing_game(request: dict) -> dict:
    """``fake_game``, but the games whose seed is in $SWISS_FAIL_SEEDS fail."""
    if str(request["seed"]) in os.environ.get("SWISS_FAIL_SEEDS", "").split(","):
        raise RuntimeError("the machine went away")
    return fake_game(request)


def config(tmp_path, bots: int, rounds: int, concurrency: int = 1) -> TournamentConfig:
    return TournamentConfig(
        name="sw", path="<test>", rules=RuleSpec.make(), seats=2,
        bots=tuple(BotEntry(f"b{i:02d}", "greedy") for i in range(bots)), format="swiss", format_options={},
        rounds=rounds, games=None, seed=5, time_control={}, fault_policy="forfeit", sandbox="none",
        concurrency=concurrency, executor="local", address=None, play="bots", output=tmp_path / "out",
        anchor=None, replays=False, pause_idle=False)


def report_of(output):
    store = Store.open(output, create=False)
    try:
        return report(store)
    finally:
        store.close()


def groups(store_games: list[dict]) -> dict[int, list[dict]]:
    out: dict[int, list[dict]] = {}
    for g in store_games:
        out.setdefault(g["group"], []).append(g)
    return out


@pytest.mark.parametrize("bots,rounds,workers", [(8, 5, 1), (9, 6, 2)])
def test_a_swiss_run_has_no_repeat_pairing_balanced_seats_and_byes(tmp_path, bots, rounds, workers):
    cfg = config(tmp_path, bots, rounds, concurrency=workers)
    summary = run_tournament(cfg, game_fn=fake_game, progress=False, echo=lambda _t: None)
    assert summary["played"] == total_games(cfg) == rounds * (bots // 2) * 2
    assert summary["swiss"]["rounds_paired"] == rounds and summary["swiss"]["repeat_pairings"] == 0
    store = Store.open(cfg.output, create=False)
    games = store.games()
    store.close()
    by_group = groups(games)
    pairs = Counter()
    for g, two in by_group.items():
        assert sorted(x["rotation"] for x in two) == [0, 1]
        first = [next(x for x in two if x["rotation"] == r)["seats"] for r in (0, 1)]
        assert [s["bot"] for s in first[0]] == [s["bot"] for s in reversed(first[1])]  # both seats each
        pairs[frozenset(s["bot"] for s in first[0])] += 1
    assert set(pairs.values()) == {1}  # no pairing twice
    per_round = Counter()
    for g in by_group:
        per_round[g // (bots // 2)] += 1
    assert set(per_round.values()) == {bots // 2}
    plan = SwissPlan(cfg, games)
    played = Counter(s["bot"] for g in games if g["rotation"] == 0 for s in g["seats"])
    if bots % 2:  # one bye a round, never twice to the same bot in 6 rounds of 9
        assert sorted(played.values()).count(rounds - 1) == rounds and max(played.values()) == rounds
    else:
        assert set(played.values()) == {rounds}
    # the first seat of the groups' first games alternates: first minus second seats within 2
    balance = Counter()
    for two in by_group.values():
        a, b = (s["bot"] for s in next(x for x in two if x["rotation"] == 0)["seats"])
        balance[a] += 1
        balance[b] -= 1
    assert all(abs(balance[b.name]) <= 2 for b in cfg.bots), balance
    assert plan.done == {g["key"] for g in games}
    rep = report_of(cfg.output)
    assert rep["swiss"]["standings"][0]["score"] >= rep["swiss"]["standings"][-1]["score"]
    assert "swiss score" in render_text(rep)


def test_rounds_are_paired_by_score():
    met = [set() for _ in range(6)]
    pairs, bye, repeats = pair_round([5, 4, 3, 2, 1, 0], met, set())
    assert pairs == [(5, 4), (3, 2), (1, 0)] and bye is None and repeats == 0
    met[5].add(4), met[4].add(5)
    pairs, _, _ = pair_round([5, 4, 3, 2, 1, 0], met, set())
    assert pairs[0] == (5, 3)  # the best one it has not met
    pairs, bye, _ = pair_round([0, 1, 2, 3, 4], [set() for _ in range(5)], {4})
    assert bye == 3  # the lowest-ranked bot without a bye


def test_pairing_backtracks_rather_than_repeat():
    # 0-1 and 2-3 met, and 0-2 met: greedy 0-3 leaves 1-2 (fine); make the tail stuck:
    met = [set() for _ in range(4)]
    for a, b in [(0, 1), (2, 3), (1, 2)]:
        met[a].add(b), met[b].add(a)
    pairs, _, repeats = pair_round([0, 1, 2, 3], met, set())
    # greedy would take 0-2 then 1-3 is fine too; check no repeat whatever the route
    assert repeats == 0 and all(b not in met[a] for a, b in pairs)
    met = [set() for _ in range(4)]
    for a, b in [(0, 2), (1, 3)]:
        met[a].add(b), met[b].add(a)
    met[0].add(3), met[3].add(0)  # 0 can only meet 1; greedy 0-1 leaves 2-3: fine
    pairs, _, repeats = pair_round([0, 1, 2, 3], met, set())
    assert sorted(pairs) == [(0, 1), (2, 3)] and repeats == 0


def test_the_next_round_waits_for_the_current_one(tmp_path):
    cfg = config(tmp_path, 4, 3)
    plan = SwissPlan(cfg)
    it = plan.tasks()
    first = [next(it) for _ in range(4)]
    assert all(t is not WAIT for t in first) and next(it) is WAIT
    for t in first[:3]:
        plan.stored(t, [1, 2])
    assert next(it) is WAIT
    plan.stored(first[3], [1, 2])
    second = next(it)
    assert second is not WAIT and second.group == 2  # round 2 starts at group P = 2


def test_resume_mid_round_pairs_every_round_as_before(tmp_path, monkeypatch):
    cfg = config(tmp_path, 6, 4)
    whole = run_tournament(cfg, game_fn=fake_game, progress=False, echo=lambda _t: None)
    store = Store.open(cfg.output, create=False)
    reference = {g["key"]: [s["bot"] for s in g["seats"]] for g in store.games()}
    store.close()
    # the same tournament with groups 7 and 8 (the end of round 3) failing, then resumed
    other = replace(cfg, output=tmp_path / "cut")
    monkeypatch.setenv("SWISS_FAIL_SEEDS", ",".join(str(group_seed(cfg.seed, g)) for g in (7, 8)))
    first = run_tournament(other, game_fn=failing_game, progress=False, echo=lambda _t: None)
    assert first["played"] == 14 and first["failed"] == 4 and first["swiss"]["rounds_paired"] == 3
    monkeypatch.delenv("SWISS_FAIL_SEEDS")
    second = run_tournament(other, game_fn=fake_game, progress=False, echo=lambda _t: None)
    assert first["played"] + second["played"] == whole["played"] == 24
    store = Store.open(other.output, create=False)
    resumed = {g["key"]: [s["bot"] for s in g["seats"]] for g in store.games()}
    store.close()
    assert resumed == reference


def test_swiss_file_validation(tmp_path):
    from arena.tournament.yamlsource import ConfigError

    path = tmp_path / "s.yaml"
    bots = "".join(f"  - {{name: b{i}, bot: random}}\n" for i in range(10))
    path.write_text("name: s\nformat: swiss\nbots:\n" + bots)
    cfg = load_config(path)
    assert cfg.rounds == 4 and total_games(cfg) == 4 * 5 * 2  # ceil(log2 10) rounds by default
    path.write_text("name: s\nformat: swiss\nrounds: 10\nbots:\n" + bots)
    with pytest.raises(ConfigError, match="at most 9 swiss rounds"):
        load_config(path)
    path.write_text("name: s\nformat: swiss\nseats: 3\nbots:\n" + bots)
    with pytest.raises(ConfigError, match="seats: 2"):
        load_config(path)
