"""The engine's commands through the CLI: ``arena play``, ``arena replay``, ``arena cards``
and ``arena bench engine``, including bad input (a sentence and a non-zero exit, never a
traceback)."""

from __future__ import annotations

import json

import pytest

from cli_helpers import run as cli_run  # noqa: E402


def run(*args, ok=True):
    """Invoke ``arena ARGS``; Typer's usage errors count as said on stderr."""
    return cli_run(*args, ok=ok, usage=True)


@pytest.fixture(scope="module")
def replay_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("replays") / "game.json"
    run("play", "greedy", "random", "--seed", 3, "--replay", path)
    return path


# ---------------------------------------------------------------- arena play
def test_play_prints_the_result_as_json():
    out = json.loads(run("play", "greedy", "greedy", "--seed", 7, "--json").stdout)
    assert out["seed"] == 7 and out["players"] == 2 and out["bots"] == ["greedy", "greedy"]
    assert sorted(out["ranking"]) in ([1, 2], [1, 1]) and len(out["scores"]) == 2
    assert out["adjudicated"] is False and out["rounds"] > 1


def test_play_is_deterministic_for_a_seed():
    a = json.loads(run("play", "greedy", "random", "--seed", 5, "--json").stdout)
    b = json.loads(run("play", "greedy", "random", "--seed", 5, "--json").stdout)
    assert (a["scores"], a["rounds"]) == (b["scores"], b["rounds"])


def test_play_fills_seats_and_takes_rule_parameters():
    out = json.loads(run("play", "random", "--players", 3, "--param", "max_rounds=4", "--json").stdout)
    assert out["players"] == 3 and out["rounds"] == 4 and out["adjudicated"] is True
    assert out["rules"]["params"] == {"max_rounds": 4}


def test_play_with_an_explicit_deal(tmp_path):
    deal = tmp_path / "deal.json"
    deal.write_text(json.dumps({"white": [f"W{i:02}" for i in range(1, 33)], "black": ["B01", "B02", "B03", "B04", "B05"]}))
    path = tmp_path / "dealt.json"
    run("play", "greedy", "greedy", "--deal", deal, "--replay", path)
    record = json.loads(path.read_text())
    assert record["deal"]["black"] == ["B01", "B02", "B03", "B04", "B05"]
    assert record["result"]["adjudicated"] is False
    run("replay", "--quiet", path)


@pytest.mark.parametrize("args, words", [
    (["nobot", "greedy"], "unknown bot 'nobot'"),
    (["greedy", "greedy", "--param", "actions_per_turn"], "expected NAME=VALUE"),
    (["greedy", "greedy", "--param", "=4"], "the parameter name is empty"),
    (["greedy", "greedy", "--param", "actions_per_trun=4"], "unknown parameter 'actions_per_trun'"),
    (["greedy", "greedy", "--param", "actions_per_turn=0"], "'actions_per_turn' must be a whole number >= 1"),
    (["greedy", "greedy", "--param", "starting_pieces=[O1"], "cannot read the value"),
    (["greedy", "greedy", "--rules", "no-such-variant"], "unknown variant 'no-such-variant'"),
    (["greedy", "--players", 1], "players"),
    (["greedy", "greedy", "greedy", "--players", 2], "3 bots for 2 seats"),
])
def test_play_bad_input_is_a_sentence(args, words):
    result = run("play", *args, ok=False)
    assert result.exit_code == 2
    assert words in result.stderr


@pytest.mark.parametrize("content, words", [
    (None, "cannot read the deal file"),
    ("{not json", "not valid JSON"),
    ("[1, 2]", "a deal must be an object"),
    ('{"white": ["W99"], "black": []}', "W99"),
    ('{"white": ["W01", "W01"], "black": []}', "W01 appears twice"),
])
def test_play_bad_deal_file_is_a_sentence(tmp_path, content, words):
    deal = tmp_path / "deal.json"
    if content is not None:
        deal.write_text(content)
    result = run("play", "greedy", "greedy", "--deal", deal, ok=False)
    assert result.exit_code == 2 and words in result.stderr


# ---------------------------------------------------------------- arena replay
def test_replay_reproduces_and_prints_turns(replay_file):
    out = run("replay", replay_file, "--no-color").stdout
    assert "reproduces" in out and "round 1" in out
    record = json.loads(replay_file.read_text())
    assert f"scores {record['result']['scores']}" in out


def test_replay_quiet_only_checks(replay_file):
    out = run("replay", "--quiet", replay_file).stdout
    assert out.strip().endswith("rounds") or "reproduces" in out
    assert "round 1:" not in out


def _corrupt(record):
    for entry in record["actions"]:
        if entry.get("action", {}).get("type") == "place":
            entry["action"]["cells"] = [[0, 0], [0, 1], [0, 2], [0, 3], [0, 4]][: len(entry["action"]["cells"])]
            return record
    raise AssertionError("no placement to corrupt")


@pytest.mark.parametrize("change, words", [
    (_corrupt, "does not reproduce"),
    (lambda r: {**r, "seed": r["seed"] + 1}, "does not reproduce"),
    (lambda r: {**r, "final_digest": "0" * 64}, "digest mismatch"),
    (lambda r: {**r, "result": {**r["result"], "scores": [99, 99]}}, "result differs"),
    (lambda r: {**r, "actions": r["actions"] + [{"seat": 0, "action": {"type": "pass"}}]}, "does not reproduce"),
    (lambda r: {**r, "rules": {"variants": [], "params": {"row_size": 0}}}, "cannot start the recorded game"),
    (lambda r: {k: v for k, v in r.items() if k != "actions"}, "no field 'actions'"),
    (lambda r: {**r, "format": "chess-pgn"}, "not a Project L replay"),
])
def test_corrupted_replay_is_a_sentence(replay_file, tmp_path, change, words):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(change(json.loads(replay_file.read_text()))))
    for quiet in ([], ["--quiet"]):
        result = run("replay", *quiet, bad, ok=False)
        assert words in result.stderr and str(bad) in result.stderr


@pytest.mark.parametrize("content, words", [
    (None, "the replay file does not exist"),
    ('{"format": "project-l-replay", "actions": [', "not valid JSON"),
    ("[]", "not a Project L replay"),
])
def test_unreadable_replay_is_a_sentence(tmp_path, content, words):
    path = tmp_path / "r.json"
    if content is not None:
        path.write_text(content)
    result = run("replay", path, ok=False)
    assert words in result.stderr


# ---------------------------------------------------------------- arena cards
def test_cards_lists_every_puzzle():
    out = run("cards").stdout
    assert out.startswith("base: 52 puzzles, shapes O1 I2 I3 L3 I4 O4 T4 L4 Z4")
    assert "W01" in out and "B20" in out


def test_cards_draws_one_card():
    out = run("cards", "w09").stdout.splitlines()
    assert out[0] == "W09  white, 1 points, reward O1, 2 cells"
    assert out[1:] == ["  . . . . .", "  . . . . .", "  . . # . .", "  . . # . .", "  . . . . ."]


def test_cards_as_json():
    listing = json.loads(run("cards", "--json").stdout)
    assert len(listing) == 52 and listing[0] == {"id": "W01", "color": "white", "points": 2, "reward": "I2", "cells": 5}
    card = json.loads(run("cards", "B07", "--json").stdout)
    assert card["shape"][4] == "#####" and card["points"] == 4


@pytest.mark.parametrize("args, words", [
    (["Z99"], "no card 'Z99'"),
    (["--set", "nope"], "no card set named 'nope'"),
])
def test_cards_bad_input_is_a_sentence(args, words):
    result = run("cards", *args, ok=False)
    assert result.exit_code == 2 and words in result.stderr


# ---------------------------------------------------------------- arena bench engine
def test_bench_engine_prints_figures():
    out = json.loads(run("bench", "engine", "--games", 1, "--json").stdout)
    assert out["rules"] == "base" and out["games"] == 1 and out["decisions"] > 10
    for key in ("decisions_per_s", "cold_decisions_per_s", "enumerate_us_median", "random_games_per_s"):
        assert out[key] > 0


def test_bench_engine_plays_solo_rules_with_one_seat():
    out = json.loads(run("bench", "engine", "--games", 1, "--rules", "solo", "--json").stdout)
    assert out["rules"] == "solo" and out["players"] == 1 and out["decisions"] > 10
    assert "rules solo (1 seat):" in run("bench", "engine", "--games", 1, "--rules", "solo").stdout


def test_bench_engine_bad_rules_is_a_sentence():
    result = run("bench", "engine", "--games", 1, "--rules", "no-such-variant", ok=False)
    assert result.exit_code == 2 and "unknown variant" in result.stderr
