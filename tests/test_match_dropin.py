"""What a cutechess-cli or fastchess user meets first: every bot `arena bots` lists plays
under --inprocess, a program typed where a bot name goes is answered with the --cmd to
give, `arena run` says it continues a stored run, and `arena standings` takes --anchor."""

from __future__ import annotations

import json

from cli_helpers import run


def test_pass_plays_in_process_as_arena_bots_lists_it(tmp_path):
    r = run("match", "pass", "random", "--inprocess", "--games", 2, "--no-replays", "-o", tmp_path / "m")
    assert "2 games played" in r.stdout
    assert "pass" in run("bots").stdout


def test_a_path_where_a_bot_name_goes_suggests_cmd(tmp_path):
    r = run("match", "v2/bot.py", "v1/bot.py", ok=False, one_line=True)
    assert "'v2/bot.py' is not a registered bot" in r.stderr and '--cmd "python3 v2/bot.py"' in r.stderr
    r = run("match", "greedy", "engines/my-bot", ok=False, one_line=True)
    assert '--cmd "engines/my-bot"' in r.stderr


def test_run_says_it_continues_a_stored_run(tmp_path):
    (tmp_path / "t.yaml").write_text(f"name: t\nbots: [greedy, random]\ngames: 2\nexecutor: inprocess\n"
                                     f"replays: false\noutput: {tmp_path / 'out'}\n")
    first = run("run", tmp_path / "t.yaml", "--no-progress")
    assert "continuing" not in first.stderr
    again = run("run", tmp_path / "t.yaml", "--no-progress")
    assert f"continuing t: 2 of 2 games already stored in {tmp_path / 'out'}" in again.stderr
    assert "0 games played" in again.stdout


def test_standings_take_an_anchor(tmp_path):
    out = tmp_path / "m"
    run("match", "greedy", "random", "--inprocess", "--games", 4, "--no-replays", "-o", out)
    rep = json.loads(run("standings", out, "--json", "--anchor", "greedy").stdout)
    assert rep["ratings"]["anchor"] == "greedy"
    elo = {r["bot"]: r["elo"] for r in rep["standings"]}
    assert elo["greedy"] == 0.0 and elo["random"] < 0
    bad = run("standings", out, "--anchor", "planner", ok=False, one_line=True)
    assert "--anchor 'planner': no stored game has that bot (the bots: greedy, random)" in bad.stderr
