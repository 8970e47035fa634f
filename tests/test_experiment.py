"""House-rule experiments: the file, the statistics, a known effect, and `arena experiment`."""

from __future__ import annotations

import csv
import io
import json
import math
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from arena.cli import app
from arena.experiment import load_experiment, run_experiment
from arena.experiment.config import ConfigError
from arena.experiment.report import write_report
from engine.stats import compare, mean_ci, wilson

ROOT = Path(__file__).resolve().parents[1]


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "exp.yaml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def small(tmp_path, games=4, rule_sets=None) -> Path:
    rule_sets = rule_sets or """
      - name: revised
        variants: [revised]
      - name: 4-actions
        variants: [revised]
        params: {actions_per_turn: 4}
    """
    return write(tmp_path, f"""
    name: small
    seats: 2
    bots: [greedy, {{name: greedy-b, bot: greedy}}]
    games: {games}
    seed: 3
    concurrency: 2
    output: {tmp_path / 'out'}
    rule_sets:{textwrap.indent(textwrap.dedent(rule_sets), '    ')}
    """)


def test_wilson_interval_matches_known_values():
    w = wilson(8, 10)
    assert w["rate"] == pytest.approx(0.8)
    assert w["low"] == pytest.approx(0.4902, abs=1e-3)
    assert w["high"] == pytest.approx(0.9433, abs=1e-3)
    assert wilson(0, 20)["low"] == 0.0 and wilson(0, 20)["high"] == pytest.approx(0.1611, abs=1e-3)
    assert wilson(0, 0)["rate"] is None


def test_mean_interval_over_clusters_is_wider_when_clusters_are_correlated():
    values = [1, 1, 5, 5, 9, 9, 3, 3]
    plain = mean_ci(values)
    clustered = mean_ci(values, clusters=[0, 0, 1, 1, 2, 2, 3, 3])
    assert plain["mean"] == clustered["mean"] == pytest.approx(4.5)
    assert clustered["high"] - clustered["low"] > plain["high"] - plain["low"]
    assert plain["sd"] == pytest.approx(math.sqrt(sum((v - 4.5) ** 2 for v in values) / 7))


def test_house_rules_file_compares_the_required_rule_sets():
    cfg = load_experiment(ROOT / "tournaments" / "house-rules.yaml")
    by_name = {rs.name: rs.spec for rs in cfg.rule_sets}
    assert by_name["revised"].variants == ("revised",)
    assert dict(by_name["4-actions"].params) == {"actions_per_turn": 4}
    assert "no-master" in by_name["no-master"].variants
    assert "ghost" in by_name["ghost"].variants
    assert cfg.base.play == "inprocess" and cfg.base.concurrency == 2


@pytest.mark.parametrize("rule_sets, field", [
    ("""
      - name: bad
        variants: [revised]
        params: {actions_per_turn: 0}
    """, "rule_sets[0].params.actions_per_turn"),
    ("""
      - name: ok
      - name: ok
    """, "rule_sets[1].name"),
    ("""
      - name: x
        variants: [no-such-variant]
    """, "rule_sets[0].variants"),
])
def test_bad_rule_set_is_reported_with_file_line_and_field(tmp_path, rule_sets, field):
    with pytest.raises(ConfigError) as err:
        load_experiment(small(tmp_path, rule_sets=rule_sets))
    assert f"field '{field}'" in str(err.value)
    assert "exp.yaml, line " in str(err.value)


def test_unknown_bot_uses_the_tournament_validation(tmp_path):
    path = small(tmp_path)
    path.write_text(path.read_text().replace("bots: [greedy,", "bots: [nobody,"))
    with pytest.raises(ConfigError, match=r"line \d+, field 'bots\[0\]\.bot': unknown bot 'nobody'"):
        load_experiment(path)


def test_same_rule_sets_give_identical_games_so_deals_are_paired(tmp_path):
    cfg = load_experiment(small(tmp_path, games=6, rule_sets="""
      - name: a
        variants: [revised]
      - name: b
        variants: [revised]
    """))
    run = run_experiment(cfg, progress=False)
    a = [r for r in run["rows"] if r["rule_set"] == "a"]
    b = [r for r in run["rows"] if r["rule_set"] == "b"]
    assert len(a) == len(b) == 6
    strip = lambda r: {k: v for k, v in r.items() if k not in ("rule_set", "duration_s", "replay")}  # noqa: E731
    assert [strip(r) for r in a] == [strip(r) for r in b]
    comp = compare({"a": a, "b": b})
    diff = comp["paired"]["b"]["rounds"]
    assert diff["mean"] == 0 and diff["low"] == 0 and diff["high"] == 0
    assert comp["identical"] == ["b"]


def test_four_actions_per_turn_shorten_games_significantly(tmp_path):
    """A known effect: with a fourth action per turn the black deck runs out in fewer rounds."""
    cfg = load_experiment(small(tmp_path, games=40))
    run = run_experiment(cfg, progress=False)
    assert not run["failed"] and len(run["rows"]) == 80
    comp = compare({rs.name: [r for r in run["rows"] if r["rule_set"] == rs.name] for rs in cfg.rule_sets})
    base, four = comp["summaries"]["revised"], comp["summaries"]["4-actions"]
    assert comp["identical"] == []
    assert four["rounds"]["high"] < base["rounds"]["low"]          # the intervals do not even overlap
    diff = comp["paired"]["4-actions"]["rounds"]
    assert diff["high"] < -1.0                                      # at least a round shorter, at 95%
    assert base["seat_wins"][0]["n"] == 40
    assert sum(w["rate"] for w in base["seat_wins"]) == pytest.approx(1.0)


def test_experiment_command_writes_report_charts_and_csv(tmp_path):
    path = small(tmp_path, games=4)
    result = CliRunner().invoke(app, ["experiment", str(path), "--no-progress"])
    assert result.exit_code == 0, result.output
    assert "games/s" in result.output and "4-actions" in result.output
    out = tmp_path / "out"
    report = (out / "report.md").read_text()
    assert "| figure | revised | 4-actions |" in report
    assert "seat 0 wins" in report and "adjudicated" in report and "faults" in report
    assert "## Paired differences against `revised`" in report
    for png in ("seat-wins.png", "scores.png", "rounds.png", "completed.png"):
        assert (out / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert f"]({png})" in report
    with (out / "games.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 8
    assert {r["rule_set"] for r in rows} == {"revised", "4-actions"}
    assert all(int(r["seat0_white"]) + int(r["seat0_black"]) >= 0 for r in rows)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["rule_sets"] == ["revised", "4-actions"]
    # run again (every game is stored, none is played): the summary as CSV, one row per rule set
    again = CliRunner().invoke(app, ["experiment", str(path), "--no-progress", "--no-charts", "--csv"])
    assert again.exit_code == 0, again.output
    table = list(csv.DictReader(io.StringIO(again.output[again.output.index("rule_set,"):])))  # after stderr's lines
    assert [r["rule_set"] for r in table] == ["revised", "4-actions"]
    assert all(int(r["games"]) == 4 and 0 <= float(r["seat0_wins"]) <= 1 for r in table)
    assert float(table[0]["rounds_low"]) <= float(table[0]["rounds"]) <= float(table[0]["rounds_high"])


def test_experiment_command_reports_a_bad_file_as_a_sentence(tmp_path):
    path = write(tmp_path, "name: x\nbots: [greedy, random]\ngames: 2\n")
    result = CliRunner().invoke(app, ["experiment", str(path)])
    assert result.exit_code == 2
    assert "rule_sets" in result.output and "Traceback" not in result.output


def test_report_shows_completed_puzzles_by_colour(tmp_path):
    cfg = load_experiment(small(tmp_path, games=2))
    run = run_experiment(cfg, progress=False)
    comp = write_report(cfg, run, charts=False)
    s = comp["summaries"]["revised"]
    assert s["completed_white"]["mean"] + s["completed_black"]["mean"] > 0
    for r in run["rows"]:
        assert r["seat0_white"] + r["seat0_black"] >= 0


def test_faults_of_bot_processes_are_counted(tmp_path):
    """With bot processes (executor: local) a crashing bot is a fault and a forfeited seat."""
    import sys

    misbehave = ROOT / "tests" / "bots" / "misbehave.py"
    path = write(tmp_path, f"""
    name: faulty
    seats: 2
    bots:
      - greedy
      - {{name: crasher, cmd: [{sys.executable}, {misbehave}, crash]}}
    games: 2
    executor: local
    sandbox: none
    replays: true
    output: {tmp_path / 'out'}
    rule_sets:
      - name: revised
        variants: [revised]
    """)
    cfg = load_experiment(path)
    run = run_experiment(cfg, progress=False)
    assert not run["failed"] and len(run["rows"]) == 2
    comp = write_report(cfg, run, charts=False)
    s = comp["summaries"]["revised"]
    assert s["faults"] == 2 and s["forfeits"] == 2
    assert s["games_with_faults"]["rate"] == 1.0
    assert s["bots"]["greedy"]["win"]["rate"] == 1.0
    assert all(Path(r["replay"]).is_file() for r in run["rows"])
    assert "| faults (games with any) | 2 (100.0%" in (tmp_path / "out" / "report.md").read_text()


@pytest.mark.slow
def test_kill_9_then_run_again_continues_without_playing_a_game_twice(tmp_path):
    path = small(tmp_path, games=16)
    cfg = load_experiment(path).with_overrides(concurrency=1)
    from killing import kill_when_stored

    kill_when_stored(["experiment", str(path), "-j", "1", "--no-progress", "--no-charts"],
                     tmp_path / "out" / "experiment.sqlite", "rows", 6)
    result = CliRunner().invoke(app, ["experiment", str(path), "-j", "1", "--no-progress", "--no-charts", "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert "continuing small" in result.stderr
    assert out["games"] == 32 and 0 < out["played"] < 32
    with open(tmp_path / "out" / "games.csv") as f:
        keys = [(r["rule_set"], r["group"], r["rotation"]) for r in csv.DictReader(f)]
    assert len(keys) == 32 == len(set(keys))
    # the same games as a run never interrupted (the games are deterministic)
    fresh = run_experiment(cfg.with_overrides(output=tmp_path / "fresh"), progress=False, echo=lambda t: None)
    with open(tmp_path / "out" / "games.csv") as f:
        resumed = [{k: v for k, v in r.items() if k not in ("duration_s", "replay")} for r in csv.DictReader(f)]
    assert [(r["rule_set"], str(r["group"]), str(r["seat0_score"]), str(r["seat1_score"])) for r in fresh["rows"]] == \
        [(r["rule_set"], r["group"], r["seat0_score"], r["seat1_score"]) for r in resumed]


def test_without_a_progress_bar_a_line_is_printed_now_and_then(tmp_path):
    path = small(tmp_path, games=4)
    lines = []
    run = run_experiment(load_experiment(path), progress=False, echo=lines.append, tick_s=0.0)
    assert run["played"] == 8
    assert lines[0].startswith("played 1 of 8 games (12%)") and lines[-1].startswith("played 8 of 8 games (100%)")
    again = []
    assert run_experiment(load_experiment(path), progress=False, echo=again.append)["played"] == 0
    assert again == ["arena: continuing small: 8 of 8 games already stored in " + str(tmp_path / "out")]
