"""Sweeps: a grid of rule sets named by their values, reported figure by figure, validated fast."""

from __future__ import annotations

import json
import textwrap
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from arena.cli import app
from arena.experiment import load_experiment
from arena.experiment.config import ConfigError


def sweep_file(tmp_path: Path, sweep: str, games: int = 2, rule_sets: str | None = "revised", extra: str = "") -> Path:
    lines = ["name: sweep", "seats: 2", "bots: [greedy, {name: greedy-b, bot: greedy}]", f"games: {games}",
             "seed: 5", "concurrency: 2", f"output: {tmp_path / 'out'}"]
    if rule_sets is not None:
        lines += ["rule_sets:", f"  - name: {rule_sets}", "    variants: [revised]"]
    lines += ["sweep:"] + ["  " + line for line in textwrap.dedent(sweep).strip().splitlines()]
    lines += [extra]
    path = tmp_path / "sweep.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


GRID = """
actions_per_turn: [2, 3, 4]
reserve_per_shape: {from: 6, to: 14, step: 2}
"""


def test_a_grid_has_one_rule_set_per_cell_named_by_its_values(tmp_path):
    cfg = load_experiment(sweep_file(tmp_path, GRID))
    names = [rs.name for rs in cfg.rule_sets]
    # the cell of the reference's own values (3 actions, 10 pieces: the defaults) is the reference
    assert len(names) == 15 and names[0] == "revised"
    assert cfg.rule_sets[0].values == (("actions_per_turn", 3), ("reserve_per_shape", 10))
    assert "actions_per_turn=2,reserve_per_shape=6" in names and "actions_per_turn=4,reserve_per_shape=14" in names
    spec = next(rs.spec for rs in cfg.rule_sets if rs.name == "actions_per_turn=4,reserve_per_shape=8")
    assert spec.variants == ("revised",) and spec.param_dict == {"actions_per_turn": 4, "reserve_per_shape": 8}


def test_without_rule_sets_the_cell_of_the_default_values_is_the_reference(tmp_path):
    cfg = load_experiment(sweep_file(tmp_path, "max_unfinished: [2, 4, 6]\nvariants: [[revised], [revised, ghost]]",
                                     rule_sets=None))
    names = [rs.name for rs in cfg.rule_sets]
    assert len(names) == 6 and names[0] == "max_unfinished=4,variants=revised"
    assert next(rs for rs in cfg.rule_sets if rs.name.endswith("variants=revised+ghost")).spec.variants == \
        ("revised", "ghost")


def test_a_3_by_5_grid_runs_and_reports_every_cell(tmp_path):
    path = sweep_file(tmp_path, GRID)
    result = CliRunner().invoke(app, ["experiment", str(path), "--no-progress", "--strength-games", "1"])
    assert result.exit_code == 0, result.output
    out = tmp_path / "out"
    report = (out / "report.md").read_text()
    summary = json.loads((out / "summary.json").read_text())
    assert len(summary["rule_sets"]) == 15
    for fig in ("seat0-wins", "rounds", "score", "puzzles"):
        cells = summary["sweep"][fig]["cells"]
        assert len(cells) == 15 and all(c["mean"] is not None for c in cells.values())
        assert (out / f"sweep-{fig}.png").read_bytes()[:4] == b"\x89PNG"
        assert f"](sweep-{fig}.png)" in report
    assert "| actions_per_turn \\ reserve_per_shape | 6 | 8 | 10 | 12 | 14 |" in report
    for a in (2, 3, 4):
        assert f"| actions_per_turn={a} |" in report
    assert "(reference)" in report
    # four actions end the game sooner under every reserve: the report says they differ
    rounds = summary["sweep"]["rounds"]["cells"]
    assert all(rounds[f"actions_per_turn=4,reserve_per_shape={r}"]["mean"] <
               rounds[f"actions_per_turn=2,reserve_per_shape={r}"]["mean"] for r in (6, 8, 12, 14))
    assert "## The bots' strength" in report and "the yardstick" in report


def test_one_parameter_gives_a_table_and_a_chart_with_intervals(tmp_path):
    path = sweep_file(tmp_path, "actions_per_turn: [2, 3, 4]", games=4)
    result = CliRunner().invoke(app, ["experiment", str(path), "--no-progress", "--strength-games", "0"])
    assert result.exit_code == 0, result.output
    report = (tmp_path / "out" / "report.md").read_text()
    assert "| rule set | rounds | difference from the reference |" in report
    assert "| actions_per_turn=4 |" in report and "Differs from `revised`: `actions_per_turn=2`" in report


@pytest.mark.parametrize("sweep, field, words", [
    ("actions_per_trun: [2, 3]", "sweep.actions_per_trun", "did you mean 'actions_per_turn'"),
    ("actions_per_turn: [2, 0]", "sweep.actions_per_turn[1]", "must be a whole number"),
    ("reserve_per_shape: {from: 14, to: 6}", "sweep.reserve_per_shape.to", "ends (6) before it starts (14)"),
    ("reserve_per_shape: {from: 6, to: 14, step: 0}", "sweep.reserve_per_shape.step", "must be positive"),
    ("reserve_per_shape: {from: 6, to: 14, stpe: 2}", "sweep.reserve_per_shape.stpe", "unknown key of a range"),
    ("actions_per_turn: []", "sweep.actions_per_turn", "non-empty list"),
    ("variants: [[revised], [revised, ghots]]", "sweep.variants[1]", "unknown variant 'ghots'"),
    ("actions_per_turn: {from: 1, to: 100000}", "sweep.actions_per_turn", "more than 10,000"),
])
def test_a_bad_sweep_names_the_file_line_and_field(tmp_path, sweep, field, words):
    path = sweep_file(tmp_path, sweep)
    with pytest.raises(ConfigError) as err:
        load_experiment(path)
    assert "sweep.yaml, line " in str(err.value) and f"field '{field}'" in str(err.value)
    assert words in str(err.value)
    result = CliRunner().invoke(app, ["experiment", str(path), "--check"])
    assert result.exit_code != 0 and "Traceback" not in result.output and field in result.output


def test_a_bad_sweep_line_is_the_line_of_the_value(tmp_path):
    path = sweep_file(tmp_path, "actions_per_turn:\n  - 2\n  - 0\n")
    line = next(i for i, text in enumerate(path.read_text().splitlines(), 1) if text.strip() == "- 0")
    with pytest.raises(ConfigError, match=rf"line {line}, field 'sweep.actions_per_turn\[1\]'"):
        load_experiment(path)


def test_hundreds_of_cells_validate_in_seconds(tmp_path):
    path = sweep_file(tmp_path, "reserve_per_shape: {from: 5, to: 40}\nmax_unfinished: {from: 1, to: 12}",
                      extra="until: {figure: seat_wins, width: 0.1, max_games: 2000}")
    t0 = time.perf_counter()
    result = CliRunner().invoke(app, ["experiment", str(path), "--check"])
    took = time.perf_counter() - t0
    assert result.exit_code == 0, result.output
    assert "432 rule sets" in result.output and took < 5.0


def test_seats_override_replays_the_file_at_another_player_count(tmp_path):
    path = sweep_file(tmp_path, "actions_per_turn: [3, 4]", games=3)
    path.write_text(path.read_text().replace("bots: [greedy, {name: greedy-b, bot: greedy}]",
                                             "bots: [greedy, {name: greedy-b, bot: greedy}, {name: greedy-c, bot: greedy}]"))
    result = CliRunner().invoke(app, ["experiment", str(path), "--seats", "3", "--no-progress", "--no-charts",
                                      "--strength-games", "0", "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["games"] == 6 and all(s["seats"] == 3 for s in out["summaries"].values())
    bad = CliRunner().invoke(app, ["experiment", str(path), "--seats", "4", "--check"])
    assert bad.exit_code != 0 and "--seats 4: give 1 to 3" in bad.output and "Traceback" not in bad.output


def test_validate_knows_an_experiment_by_its_sweep_alone(tmp_path):
    import subprocess
    import sys

    path = tmp_path / "s.yaml"
    path.write_text("name: s\nseats: 2\nbots: [random, greedy]\ngames: 2\nexecutor: inprocess\n"
                    "sweep:\n  actions_per_turn: [2, 3]\n")
    done = subprocess.run([sys.executable, "-m", "arena.cli", "validate", str(path)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert "valid experiment" in done.stdout and "actions_per_turn=3" in done.stdout
