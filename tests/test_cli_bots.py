"""The bots commands and ``arena play`` with bot processes, through the CLI."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from arena.cli import app
from proc_check import misbehaving

ROOT = Path(__file__).resolve().parent.parent
runner = CliRunner()


def invoke(*args):
    return runner.invoke(app, list(args), catch_exceptions=False)


def test_bots_lists_the_registered_bots():
    res = invoke("bots")
    assert res.exit_code == 0
    for name in ("greedy", "random", "pass"):
        assert name in res.output
    assert "from bots.greedy" in res.output and "--cmd" in res.output
    listed = json.loads(invoke("bots", "--json").output)
    assert {"name", "command", "description", "plugin"} <= set(listed[0])


def test_play_with_names_and_cmd_reports_faults_and_sandbox_in_json(tmp_path):
    replay = tmp_path / "game.json"
    res = invoke("play", "greedy", "--cmd", " ".join(misbehaving("illegal")), "--seed", "3", "--json",
                 "--replay", str(replay), "--sandbox", "basic", "--move-ms", "2000", "--param", "max_rounds=4")
    assert res.exit_code == 0, res.output
    out = json.loads(res.output.splitlines()[-1])
    for key in ("seed", "rules", "players", "bots", "scores", "ranking", "completed", "rounds", "adjudicated",
                "forfeited", "faults", "sandbox"):
        assert key in out
    assert out["bots"] == ["greedy", "misbehave"]
    assert out["faults"][0] == [] and out["faults"][1][0]["verdict"] == "illegal_action"
    assert out["forfeited"] == [False, True] and out["sandbox"]["tier"] == "basic"
    record = json.loads(replay.read_text())
    assert record["faults"][1][0]["verdict"] == "illegal_action"
    assert invoke("replay", str(replay), "-q").exit_code == 0


def test_play_prints_each_fault_in_the_table():
    res = invoke("play", "pass", "--cmd", " ".join(misbehaving("crash")), "--param", "max_rounds=2")
    assert res.exit_code == 0
    assert "fault crash at move" in res.output and "exit code 3" in res.output


@pytest.mark.skipif(shutil.which("node") is None, reason="no node on this machine")
def test_play_runs_the_js_example_by_command():
    res = invoke("play", "--cmd", f"node {ROOT / 'bots/examples/js/bot.js'}", "--cmd", "python -m bots.run random",
                 "--json", "--sandbox", "none")
    out = json.loads(res.stdout)
    assert out["faults"] == [[], []] and out["bots"] == ["bot", "run"]  # -m bots.run: named after its module


@pytest.mark.parametrize("args, words", [
    (["play", "nosuch"], "unknown bot 'nosuch'"),
    (["play"], "name at least one bot"),
    (["play", "pass", "--sandbox", "iron"], "unknown sandbox tier"),
    (["play", "pass", "pass", "pass", "--players", "2"], "3 bots for 2 seats"),
])
def test_play_errors_are_sentences(args, words):
    res = runner.invoke(app, args)
    assert res.exit_code == 2 and words in res.output and "Traceback" not in res.output


def test_check_bot_passes_a_conforming_bot_and_exits_zero():
    res = invoke("check-bot", "--", sys.executable, "-m", "bots.run", "pass")
    assert res.exit_code == 0, res.output
    assert res.output.count("PASS ") == 9 and "the bot conforms" in res.output


def test_check_bot_fails_a_faulty_bot_with_the_offending_message():
    res = invoke("check-bot", "--move-ms", "500", "--", *misbehaving("garbage"))
    assert res.exit_code == 1
    assert "FAIL first action request: non_json" in res.output and "this is not JSON" in res.output


def test_check_bot_names_a_missing_program():
    res = runner.invoke(app, ["check-bot", "--", "no-such-program-x"])
    assert res.exit_code == 2 and "'no-such-program-x' was not found on the PATH" in res.output


def test_bench_protocol_prints_both_rates_as_json():
    res = invoke("bench", "protocol", "--json", "--decisions", "100")
    out = json.loads(res.stdout)
    assert out["protocol_per_s"] > 0 and out["echo_per_s"] > 0
    assert out["ratio"] == pytest.approx(out["protocol_per_s"] / out["echo_per_s"], rel=0.01)
