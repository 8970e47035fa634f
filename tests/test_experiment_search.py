"""Searches (``target:``): a parameter value planted in a variant of its own is found.

The ``tilt`` variant below ends the game after its first round and then gives seat 0 the
win with probability ``p(tilt.level) = clip(0.5 + 0.4 (level - 5), 0, 1)``, drawn from the
game's seed (``tilt.salt`` changes the draw, not the odds): seat 0's win share is a known
function of the parameter, 50% at level 5 alone. Run as a script, this file registers the
variant and runs the ``arena`` command line (the kill -9 test needs it in a process of its own).
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from engine import compile_rules
from engine.hookspecs import hookimpl
from engine.rules import ParamSpec, _int_at_least
from engine.variants import Variant

HERE = Path(__file__).resolve()


def seat0_odds(level: int) -> float:
    """The planted function: seat 0's chance to win at ``tilt.level``."""
    return min(1.0, max(0.0, 0.5 + 0.4 * (level - 5)))


class Tilt:
    """The ``tilt`` variant (see the module docstring)."""

    @hookimpl
    def arena_rules_variants(self, register):
        register(Variant("tilt", "test: seat 0 wins with a chance set by tilt.level, after one round", params=(
            ParamSpec("tilt.level", 5, "seat 0's odds: clip(0.5 + 0.4 (level - 5), 0, 1)", _int_at_least(0, 10)("tilt.level")),
            ParamSpec("tilt.salt", 0, "changes the draw, not the odds", _int_at_least(0)("tilt.salt")))))

    @hookimpl
    def arena_rules_configure(self, variant, ruleset):
        if variant != "tilt":
            return
        odds = seat0_odds(ruleset.params["tilt.level"])
        salt = ruleset.params["tilt.salt"]

        def end_after_one_round(game) -> bool:
            game.start_finish()
            return True

        def penalty(game, seat) -> int:
            draw = int.from_bytes(hashlib.sha256(f"{game.seed}:{salt}".encode()).digest()[:4], "big") / 2 ** 32
            seat0_wins = draw < odds
            return 0 if (seat == 0) == seat0_wins else 1000

        ruleset.end_check = end_after_one_round
        ruleset.score_penalties.append(penalty)


def register_tilt():
    """Register the variant on the project's plugin manager; returns a function undoing it."""
    from engine import variants

    pm = variants.plugin_manager()
    plugin = Tilt()
    pm.register(plugin, name="test-tilt")
    variants._collect(pm)
    compile_rules.cache_clear()

    def undo():
        pm.unregister(plugin)
        variants._collect(pm)
        compile_rules.cache_clear()
    return undo


@pytest.fixture
def tilt():
    undo = register_tilt()
    yield
    undo()


def search_file(tmp_path: Path, target: str, sweep: str = "tilt.level: {from: 0, to: 10}", out="out") -> Path:
    path = tmp_path / "search.yaml"
    path.write_text(textwrap.dedent(f"""\
    name: search
    seats: 2
    bots: [greedy, {{name: greedy-b, bot: greedy}}]
    seed: 11
    concurrency: 2
    output: {tmp_path / out}
    rule_sets:
      - name: tilted
        variants: [tilt]
    sweep:
      {sweep}
    target: {target}
    """), encoding="utf-8")
    return path


def states(run) -> dict:
    return {n: v["state"] for n, v in run["sequential"]["rule_sets"].items()}


def test_the_planted_variant_gives_seat_0_the_odds_it_says(tilt):
    from engine import Game, RuleSpec

    assert [seat0_odds(v) for v in (3, 4, 5, 6, 7)] == [0.0, pytest.approx(0.1), 0.5, pytest.approx(0.9), 1.0]
    from arena.plugins import policy
    import random

    wins = 0
    for seed in range(200):
        game = Game.new(RuleSpec.make(["tilt"], {"tilt.level": 6}), 2, seed)
        bot, rng = policy("greedy"), random.Random(seed)
        while not game.is_over:
            game.apply(bot.choose(game, rng))
        assert game.round == 1
        wins += game.result()["ranking"][0] == 1
    assert 0.8 <= wins / 200 <= 0.97


def test_race_finds_the_planted_value_and_says_why_the_others_are_ruled_out(tilt, tmp_path):
    from arena.experiment import load_experiment, run_experiment
    from arena.experiment.report import write_report

    cfg = load_experiment(search_file(tmp_path, "{figure: seat_wins, seat: 0, value: 0.5, within: 0.2, "
                                                "max_games: 600, round: 8}"))
    assert len(cfg.rule_sets) == 11 and cfg.stop.kind == "target"
    run = run_experiment(cfg, progress=False, echo=lambda t: None)
    st = states(run)
    assert [n for n, s in st.items() if s == "met"] == ["tilt.level=5"]
    assert all(st[f"tilt.level={v}"] == "below" for v in range(0, 5))
    assert all(st[f"tilt.level={v}"] == "above" for v in range(6, 11))
    games = {n: v["games"] for n, v in run["sequential"]["rule_sets"].items()}
    assert games["tilt.level=0"] < games["tilt.level=4"] < 600   # the clear cases stop first
    write_report(cfg, run, charts=False)
    report = (tmp_path / "out" / "report.md").read_text()
    assert "**Values that meet the target:** `tilt.level=5`" in report
    assert "| `tilt.level=9` |" in report and "lies above the target's 0.7" in report


def test_bisection_over_a_monotone_parameter_rules_out_values_unplayed(tilt, tmp_path):
    from arena.experiment import load_experiment, run_experiment

    cfg = load_experiment(search_file(tmp_path, "{figure: seat_wins, value: 0.5, within: 0.2, max_games: 600, "
                                                "round: 8, strategy: bisect, monotone: increasing}"))
    run = run_experiment(cfg, progress=False, echo=lambda t: None)
    st = states(run)
    assert [n for n, s in st.items() if s == "met"] == ["tilt.level=5"]
    pruned = [n for n, s in st.items() if s.endswith("(monotone)")]
    assert pruned and all(run["sequential"]["rule_sets"][n]["games"] == 0 for n in pruned)
    assert all(st[f"tilt.level={v}"].startswith("below") for v in range(0, 5))
    assert all(st[f"tilt.level={v}"].startswith("above") for v in range(6, 11))
    from arena.experiment.report import write_report

    write_report(cfg, run, charts=True)
    report = (tmp_path / "out" / "report.md").read_text()
    assert "Not played (a search ruled them out unplayed)" in report and "above (monotone)" in report
    assert (tmp_path / "out" / "sweep-seat0-wins.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize("target, field", [
    ("{figure: seat_wins, value: 0.5, max_games: 100}", "target"),
    ("{figure: seat_win, value: 0.5, within: 0.1, max_games: 100}", "target.figure"),
    ("{figure: seat_wins, range: [0.6, 0.4], max_games: 100}", "target.range"),
    ("{figure: seat_wins, value: 0.5, within: 0.1, max_games: 100, strategy: bisect}", "target.strategy"),
    ("{figure: seat_wins, value: 0.5, within: 0.1}", "target"),
])
def test_a_bad_target_names_the_file_line_and_field(tilt, tmp_path, target, field):
    from arena.experiment import load_experiment
    from arena.experiment.config import ConfigError

    with pytest.raises(ConfigError, match=rf"search\.yaml, line \d+, field '{field}'"):
        load_experiment(search_file(tmp_path, target))


def _stored(db: Path) -> int:
    try:
        with sqlite3.connect(db, timeout=1) as conn:
            return conn.execute("SELECT COUNT(*) FROM rows").fetchone()[0]
    except sqlite3.Error:
        return 0


@pytest.mark.slow
def test_kill_9_mid_search_then_continue_plays_nothing_twice(tilt, tmp_path):
    target = "{figure: seat_wins, value: 0.5, within: 0.2, max_games: 600, round: 8}"
    path = search_file(tmp_path, target)
    db = tmp_path / "out" / "experiment.sqlite"
    argv = [sys.executable, str(HERE), "experiment", str(path), "-j", "1", "--no-progress", "--no-charts",
            "--strength-games", "0"]
    proc = subprocess.Popen(argv, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    try:
        while _stored(db) < 150:  # mid-search: past the first rounds, long before the end
            assert proc.poll() is None, proc.stderr.read().decode()
            assert time.monotonic() < deadline, "too few games stored in time"
            time.sleep(0.02)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    killed_at = _stored(db)
    done = subprocess.run(argv + ["--json"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "continuing search" in done.stderr
    resumed = json.loads(done.stdout)
    assert resumed["played"] == resumed["games"] - killed_at       # nothing stored was played again
    with sqlite3.connect(db) as conn:
        keys = [k for (k,) in conn.execute("SELECT key FROM rows")]
    assert len(keys) == len(set(keys)) == resumed["games"]
    # the same decisions and games as a search never interrupted
    fresh = subprocess.run([*argv[:3], "--json", "-o", str(tmp_path / "fresh")] + argv[3:], capture_output=True,
                           text=True, timeout=300)
    assert fresh.returncode == 0, fresh.stderr
    again = json.loads(fresh.stdout)
    assert again["games"] == resumed["games"]
    assert again["sequential"]["rule_sets"] == resumed["sequential"]["rule_sets"]


if __name__ == "__main__":  # the arena command line with the tilt variant registered
    register_tilt()
    from arena.cli import app

    app(prog_name="arena")
