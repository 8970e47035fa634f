"""The bot rated 0: ``arena match --anchor BOT``, by default the baseline (the second bot
typed, an sprt's baseline), and in a tournament file an sprt's baseline."""

from __future__ import annotations

import json

from cli_helpers import run


def _anchor(out) -> str:
    return json.loads(run("standings", out, "--json", "--bootstrap", 0).stdout)["ratings"]["anchor"]


def test_a_match_anchors_the_second_bot_typed_unless_told(tmp_path):
    base = ("--games", 4, "-j", 1, "--inprocess", "--no-replays", "--quiet")
    run("match", "random", "greedy", *base, "--output", tmp_path / "a")
    assert _anchor(tmp_path / "a") == "greedy"  # the baseline, not random nor the first by name
    run("match", "random", "greedy", *base, "--anchor", "random", "--output", tmp_path / "b")
    assert _anchor(tmp_path / "b") == "random"
    r = run("match", "random", "greedy", *base, "--anchor", "planner", "--output", tmp_path / "c", ok=False)
    assert "--anchor" in r.stderr and "no bot named 'planner'" in r.stderr
    # an anchor changes no game: a stored match continues under another one
    run("match", "random", "greedy", *base, "--anchor", "random", "--output", tmp_path / "a")
    assert _anchor(tmp_path / "a") == "random"


def test_an_sprt_file_anchors_its_baseline(tmp_path):
    (tmp_path / "s.yaml").write_text(
        "name: s\nbots: [greedy, random]\nformat: {type: sprt, candidate: random}\ngames: 4\n"
        f"executor: inprocess\nreplays: false\noutput: {tmp_path / 'out'}\n", encoding="utf-8")
    run("run", tmp_path / "s.yaml", "--no-progress")
    assert _anchor(tmp_path / "out") == "greedy"
