"""The example bots in JavaScript and C play legal games end to end."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from arena.referee import play_game
from proc_check import assert_gone

ROOT = Path(__file__).resolve().parent.parent
JS = ROOT / "bots" / "examples" / "js" / "bot.js"
C = ROOT / "bots" / "examples" / "c" / "bot.c"


@pytest.fixture(scope="module")
def c_bot(tmp_path_factory):
    gcc = shutil.which("gcc") or shutil.which("cc")
    if gcc is None:
        pytest.skip("no C compiler on this machine")
    exe = tmp_path_factory.mktemp("cbot") / "cbot"
    subprocess.run([gcc, "-O2", "-Wall", "-Werror", "-o", str(exe), str(C)], check=True, timeout=120)
    exe.parent.chmod(0o755)
    return str(exe)


@pytest.fixture(scope="module")
def node():
    exe = shutil.which("node")
    if exe is None:
        pytest.skip("no node on this machine")
    return exe


def test_js_and_c_bots_play_a_whole_game_against_each_other_without_faults(node, c_bot):
    out = play_game({"seats": [{"name": "js", "cmd": [node, str(JS)]}, {"name": "c", "cmd": [c_bot]}],
                     "seed": 11, "sandbox": "strict"})
    assert out["result"]["ranking"] and not any(out["result"]["forfeited"])
    for seat in out["seats"]:
        assert seat["faults"] == [] and seat["moves"] > 10
        assert_gone(seat["pid"])
    assert [s["bot"]["name"] for s in out["seats"]] == ["js-example", "c-example"]


@pytest.mark.parametrize("players", [3, 4])
def test_example_bots_play_against_built_ins_with_more_players(node, c_bot, players):
    seats = [{"name": "js", "cmd": [node, str(JS)]}, {"name": "c", "cmd": [c_bot]}, {"name": "g", "bot": "greedy"},
             {"name": "r", "bot": "random"}][:players]
    out = play_game({"seats": seats, "seed": players, "sandbox": "basic"})
    assert all(s["faults"] == [] for s in out["seats"])
    assert len(out["result"]["scores"]) == players


def test_the_readmes_say_how_to_run_them():
    assert "node bots/examples/js/bot.js" in (JS.parent / "README.md").read_text()
    assert "gcc" in (C.parent / "README.md").read_text()


def test_variant_games_with_decisions_go_through_the_protocol(node, c_bot, tmp_path):
    """Under revised + ghost, level-up decisions (R11.3) reach protocol bots and are answered."""
    import json

    kinds = set()
    for seed in range(8):
        other = {"name": "js", "cmd": [node, str(JS)]} if seed % 2 else {"name": "c", "cmd": [c_bot]}
        path = tmp_path / f"game{seed}.json"
        out = play_game({"seats": [{"name": "g", "bot": "greedy"}, other], "seed": seed, "sandbox": "none",
                         "rules": {"variants": ["revised", "ghost"], "params": {}}, "replay_path": str(path)})
        assert all(s["faults"] == [] for s in out["seats"])
        kinds |= {a["action"]["type"] for a in json.loads(path.read_text())["actions"] if "action" in a}
        if "level_up" in kinds:
            break
    assert {"level_up", "finish"} <= kinds
