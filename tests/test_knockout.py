"""The knockout format: a seeded bracket whose ties are mini-matches, decided from the
stored results only, so a stopped cup resumes to the very bracket an unbroken run plays."""

from __future__ import annotations

import json

import pytest

from arena.tournament.config import load_config
from arena.execution.inprocess import play_inprocess
from arena.tournament.knockout import KnockoutPlan, bracket_size, rounds_of, seed_order
from arena.tournament.runner import run_tournament
from arena.tournament.schedule import group_seed, total_games
from arena.tournament.store import Store
from cli_helpers import run


@pytest.mark.parametrize("bots, size, rounds, order", [
    (2, 2, 1, [1, 2]),
    (3, 4, 2, [1, 4, 2, 3]),
    (5, 8, 3, [1, 8, 4, 5, 2, 7, 3, 6]),
    (8, 8, 3, [1, 8, 4, 5, 2, 7, 3, 6]),
])
def test_seeds_one_and_two_meet_only_in_the_final(bots, size, rounds, order):
    assert bracket_size(bots) == size and rounds_of(bots) == rounds and seed_order(size) == order


FIELD = "[greedy, random, planner-fast, {name: g2, bot: greedy}, {name: r2, bot: random}]"


def _cup(tmp_path, name: str, extra: str = "") -> object:
    path = tmp_path / f"{name}.yaml"
    path.write_text(f"name: cup\nbots: {FIELD}\nformat: {{type: knockout, pairs: 1{extra}}}\n"
                    f"executor: inprocess\nreplays: false\nconcurrency: 2\noutput: {tmp_path / name}\n",
                    encoding="utf-8")
    return load_config(path)


FAIL_SEEDS: set = set()


def failing_once(request: dict) -> dict:
    """The in-process game, except for the games of the seeds in FAIL_SEEDS (a lost game)."""
    if request["seed"] in FAIL_SEEDS:
        raise RuntimeError("this game is lost")
    return play_inprocess(request)


def _stored(cfg) -> tuple[list, dict]:
    store = Store.open(cfg.output, create=False)
    try:
        games = sorted((g["key"], tuple(x["bot"] for x in g["seats"]), tuple(x["rank"] for x in g["seats"]))
                       for g in store.games())
        return games, json.loads(store.meta("knockout"))
    finally:
        store.close()


def test_a_stopped_cup_resumes_to_the_bracket_of_an_unbroken_run(tmp_path):
    whole = _cup(tmp_path, "whole")
    summary = run_tournament(whole, progress=False)
    games, bracket = _stored(whole)
    assert bracket["champion"] == "planner-fast" and summary["knockout"] == bracket
    # 5 bots in a bracket of 8: the three best seeds have byes, 4 ties are played
    first = bracket["rounds"][0]
    assert [t["how"] for t in first].count("bye") == 3 and [t["bots"] for t in first][1] == ["g2", "r2"]
    assert len(games) <= total_games(whole)
    # greedy and its copy play the same moves: their tie stays level through the extra pairs,
    # and the better seed (greedy, typed first) goes through
    level = next(t for r in bracket["rounds"] for t in r if set(t["bots"]) == {"greedy", "g2"})
    assert level["how"] == "seed" and level["winner"] == "greedy" and level["games"] == 6

    # the same cup, a game of the semi-final lost on the first run: it stops there ...
    broken = _cup(tmp_path, "broken")
    semi = next(t for t in bracket["rounds"][1] if t["how"] != "bye")
    plan = KnockoutPlan(broken)
    group = plan.first_group(semi["round"] - 1, semi["tie"] - 1)
    FAIL_SEEDS.add(group_seed(broken.seed, group))
    try:
        first_run = run_tournament(broken, game_fn=failing_once, progress=False)
    finally:
        FAIL_SEEDS.clear()
    assert first_run["failed"] >= 1 and first_run["knockout"]["champion"] is None
    # ... and the next run plays what is missing: the same games, the same bracket
    second = run_tournament(broken, progress=False)
    assert second["knockout"]["champion"] == "planner-fast"
    again, bracket2 = _stored(broken)
    assert [(k.split(":", 1)[1], b, r) for k, b, r in again] == [(k.split(":", 1)[1], b, r) for k, b, r in games]
    assert bracket2 == bracket


def test_a_knockout_file_refuses_rounds_and_other_seat_counts(tmp_path):
    path = tmp_path / "k.yaml"
    path.write_text("name: k\nbots: [greedy, random]\nformat: knockout\nrounds: 3\n", encoding="utf-8")
    r = run("validate", path, ok=False)
    assert "line 4, field 'rounds'" in r.stderr and "format.pairs" in r.stderr
    path.write_text("name: k\nbots: [greedy, random, planner]\nseats: 3\nformat: knockout\n", encoding="utf-8")
    assert "a knockout's ties are two bots" in run("validate", path, ok=False).stderr
    path.write_text("name: k\nbots: [greedy, random, planner]\nformat: {type: knockout, pairs: 2}\n",
                    encoding="utf-8")
    assert "knockout, 3 bots, 2 seats" in run("validate", path).stdout


def test_arena_match_knockout_and_gauntlet(tmp_path):
    r = run("match", "greedy", "random", "planner-fast", "--knockout", "--tie-pairs", 2, "-j", 1, "--inprocess",
            "--no-replays", "--output", tmp_path / "k")
    assert "knockout (2 pairs a tie, up to 2 more when level): champion planner-fast" in r.stdout
    assert "round 1 tie 1: greedy (bye)" in r.stdout
    assert "--tie-pairs" in run("match", "greedy", "random", "--knockout", "--games", 4, ok=False).stderr
    r = run("match", "greedy", "random", "planner-fast", "--gauntlet", "--games", 8, "-j", 1, "--inprocess",
            "--no-replays", "--output", tmp_path / "g", "--json")
    rep = json.loads(r.stdout)
    assert rep["format"] == "gauntlet"
    pairs = {(p["bot"], p["opponent"]) for p in rep["live"]["pairs"]}
    assert pairs == {("greedy", "random"), ("greedy", "planner-fast")}  # the first typed against each other
    assert "one of --sprt, --gauntlet and --knockout" in run("match", "greedy", "random", "--gauntlet", "--sprt",
                                                            "elo1=5", ok=False).stderr
