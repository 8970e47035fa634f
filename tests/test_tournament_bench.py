"""``arena bench tournament`` runs and reports its figures (their values are a benchmark's business)."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from arena.cli import app


def test_bench_tournament_json_has_the_figures():
    result = CliRunner().invoke(app, ["bench", "tournament", "--groups", "1", "--repeat", "1", "--json"])
    assert result.exit_code == 0, result.output
    figures = json.loads(result.output)
    assert figures["games"] == 6
    assert figures["games_per_s_1"] > 0 and figures["games_per_s_2"] > 0
    assert figures["speedup"] == figures["games_per_s_2"] / figures["games_per_s_1"]
    assert 0 <= figures["overhead_1"] < 1 and 0 <= figures["cpu_overhead_2"] < 1
    assert figures["bare_speedup"] == figures["bare_games_per_s_2"] / figures["bare_games_per_s_1"]
    assert figures["kept_of_bare_1"] > 0 and figures["kept_of_bare_2"] > 0


def test_bare_processes_share_the_games_and_play_each_once():
    from arena.bench import tournament as bench

    bare = bench._bare(2, 1, "inprocess")
    assert bare["games"] == 6 and len(bare["played"]) == 2 and sum(bare["played"]) == 6
    assert bare["games_per_s"] > 0


def test_bench_tournament_rejects_an_unknown_play_mode():
    result = CliRunner().invoke(app, ["bench", "tournament", "--play", "fast"])
    assert result.exit_code == 2 and "give inprocess or bots" in result.output


def test_bare_processes_with_bot_processes_leave_nothing_in_the_working_folder(tmp_path, monkeypatch):
    from arena.bench import tournament as bench

    monkeypatch.chdir(tmp_path)
    bare = bench._bare(2, 1, "bots")
    assert sum(bare["played"]) == 6
    assert list(tmp_path.iterdir()) == []  # the bots' logs went to a temporary folder
