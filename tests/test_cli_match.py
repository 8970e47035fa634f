"""``arena match``: a tournament on one command line -- live results, the SPRT stop, resume,
the equivalent tournament file, and bad options as sentences."""

from __future__ import annotations

import json
from pathlib import Path
import sys

import pytest
import yaml
from typer.testing import CliRunner

from arena.cli import app
from arena.tournament.config import load_config
from arena.tournament.store import Store
from cli_helpers import run  # noqa: E402




def test_a_match_prints_each_game_and_the_pair_results_and_resumes(tmp_path):
    out = tmp_path / "m"
    r = run("match", "greedy", "random", "--games", 6, "-j", 1, "--inprocess", "--output", out,
            "--report-every", 4, "--no-replays")
    lines = r.stdout.splitlines()
    finished = [x for x in lines if x.startswith("Finished game")]
    assert len(finished) == 6 and "(greedy vs random)" in r.stdout and "(random vs greedy)" in r.stdout
    # the block after 4 games and at the end: greedy beats random every game
    blocks = [x for x in lines if x.startswith("Results of greedy vs random")]
    assert blocks == ["Results of greedy vs random: games 4, W 4 D 0 L 0, points 4 (100.0 %)",
                      "Results of greedy vs random: games 6, W 6 D 0 L 0, points 6 (100.0 %)"]
    assert "6 of 6 stored" in r.stdout
    # a tournament like any other: the store, `arena standings`, and resuming plays nothing twice
    standings = json.loads(run("standings", out, "--json").stdout)
    assert standings["games_stored"] == 6 and standings["standings"][0]["bot"] == "greedy"
    resumed = run("match", "greedy", "random", "--games", 6, "--inprocess", "--output", out, "--no-replays")
    assert "continuing match-greedy-vs-random: 6 games already stored" in resumed.stdout
    assert "0 games played" in resumed.stdout
    # a finished match grows: -n 10 plays the 4 games after the 6 stored, the 6 are kept
    extended = run("match", "greedy", "random", "--games", 10, "--inprocess", "--output", out, "--no-replays")
    assert "4 games played" in extended.stdout and "10 of 10 stored" in extended.stdout
    shrunk = run("match", "greedy", "random", "--games", 4, "--inprocess", "--output", out, "--no-replays", ok=False)
    assert "holds 10 games, more than the 4 now scheduled" in shrunk.stderr and shrunk.stdout == ""


def test_a_match_with_sprt_stops_when_it_decides(tmp_path):
    out = tmp_path / "s"
    r = run("match", "greedy", "random", "--games", 400, "-j", 2, "--inprocess", "--output", out, "--no-replays",
            "--sprt", "elo0=0", "elo1=200", "alpha=0.05", "beta=0.05", "--json")
    rep = json.loads(r.stdout)
    assert rep["sprt"]["decision"] == "H1" and rep["sprt"]["candidate"] == "greedy"
    assert rep["summary"]["stored"] < 60  # stopped long before the 400 games
    pair = rep["live"]["pairs"][0]
    assert pair["sprt"]["decision"] == "H1" and pair["losses"] == 0
    store = Store.open(out, create=False)
    try:
        assert json.loads(store.meta("sprt_decision"))["decision"] == "H1"
    finally:
        store.close()


def test_write_yaml_gives_the_equivalent_tournament_file(tmp_path):
    path = tmp_path / "m.yaml"
    run("match", "greedy", "--cmd", f"{sys.executable} tests/bots/misbehave.py", "--games", 30,
        "--rules", "revised", "--param", "actions_per_turn=4", "--move-ms", 200, "--game-ms", 5000,
        "--increment-ms", 10, "--sandbox", "none", "--sprt", "elo0=0", "elo1=10", "beta=0.1",
        "--output", tmp_path / "out", "--write-yaml", path)
    doc = yaml.safe_load(path.read_text())
    assert doc["format"] == {"type": "sprt", "elo0": 0, "elo1": 10, "beta": 0.1} and doc["games"] == 30
    cfg = load_config(path)
    assert [b.name for b in cfg.bots] == ["greedy", "misbehave"] and cfg.format == "sprt"
    # the command is anchored where it was typed, so the file means the same from any folder
    assert cfg.format_options["candidate"] == "greedy" and cfg.bots[1].cmd[1] == str(Path("tests/bots/misbehave.py").resolve())
    assert cfg.rules.to_json() == {"variants": ["revised"], "params": {"actions_per_turn": 4}}
    assert cfg.time_control["move_ms"] == 200 and cfg.time_control["game_ms"] == 5000
    assert cfg.sandbox == "none" and cfg.format_options["beta"] == 0.1
    assert not (tmp_path / "out").exists()  # writing the file plays nothing


@pytest.mark.parametrize("args,words", [
    (["greedy"], "two bots or more"),
    (["greedy", "nosuchbot"], "bot 2: unknown bot 'nosuchbot'"),
    (["greedy", "random", "elo1=10"], "give it after --sprt"),
    (["greedy", "random", "--sprt", "elo0=10", "elo1=5"], "--sprt elo1: elo1 (5.0) must be greater than elo0"),
    (["greedy", "random", "--sprt", "gamma=3"], "the settings are elo0, elo1, alpha, beta"),
    (["greedy", "random", "--cmd", "no-such-program-xyz"], "'no-such-program-xyz' was not found"),
    (["greedy", "random", "--rules", "nosuchvariant"], "--rules/--param"),
    (["greedy", "random", "--sandbox", "tight"], "--sandbox: 'tight' is not one of "),
])
def test_bad_options_are_a_sentence(tmp_path, args, words):
    r = run("match", *args, "--output", tmp_path / "x", ok=False)
    assert words in r.stderr, r.stderr


def test_check_refuses_a_command_that_does_not_speak_the_protocol(tmp_path):
    r = CliRunner().invoke(app, ["match", "greedy", "--cmd", f"{sys.executable} -c 'print(1)'", "--check",
                                 "--games", "2", "--output", str(tmp_path / "c")])
    assert r.exit_code == 2 and "Traceback" not in r.output
    assert r.stderr.splitlines()[-1].startswith("arena: ") and "failed the conformance check, handshake" in r.stderr
    assert not (tmp_path / "c").exists()  # nothing was played


def test_games_jsonl_gets_a_line_per_stored_game(tmp_path):
    out = tmp_path / "g"
    run("match", "greedy", "random", "--games", 4, "--inprocess", "-j", 1, "--output", out, "--quiet", "--no-replays")
    lines = [json.loads(x) for x in (out / "games.jsonl").read_text().splitlines()]
    assert len(lines) == 4 and len({x["key"] for x in lines}) == 4
    assert all(set(x["bots"]) == {"greedy", "random"} and len(x["ranking"]) == 2 for x in lines)
    run("match", "greedy", "random", "--games", 4, "--inprocess", "--output", out, "--quiet", "--no-replays")
    assert len((out / "games.jsonl").read_text().splitlines()) == 4  # nothing played twice, nothing written twice


def test_tables_name_a_command_bot_as_its_ready_names_it(tmp_path):
    bot = tmp_path / "rawbot.py"
    bot.write_text("import random\nfrom arena.sdk import Bot\n\n\nclass B(Bot):\n"
                   "    name, version, want_legal = 'Lucky', '2.5', True\n\n"
                   "    def act(self, observation):\n        return random.choice(self.legal)\n\n\nB().run()\n")
    out = tmp_path / "r"
    run("match", "greedy", "--cmd", f"{sys.executable} {bot}", "--games", 2, "-j", 1, "--sandbox", "none",
        "--output", out, "--quiet", "--no-replays")
    rep = json.loads(run("standings", out, "--json").stdout)
    labels = {r["bot"]: r["label"] for r in rep["standings"]}
    assert labels["rawbot"] == "rawbot (Lucky 2.5)" and labels["greedy"].startswith("greedy ")
    assert "rawbot (Lucky 2.5)" in run("standings", out).stdout
    assert "rawbot (Lucky 2.5)" in (out / "index.html").read_text()
