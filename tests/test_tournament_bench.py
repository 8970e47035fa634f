"""``arena bench tournament`` runs and reports its figures (their values are a benchmark's business)."""

from __future__ import annotations

import json

import pytest

from typer.testing import CliRunner

from arena.cli import app


def test_bench_tournament_json_has_the_figures():
    result = CliRunner().invoke(app, ["bench", "tournament", "--groups", "1", "--repeat", "1", "--json"])
    assert result.exit_code == 0, result.output
    figures = json.loads(result.stdout)
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


@pytest.mark.slow
def test_bench_schedule_validates_generated_fields_and_times_the_first_game():
    from arena.bench.schedule import bench_schedule

    result = bench_schedule(fields=(("swiss", 30, "rounds: 3\n"), ("round-robin", 40, "")), run_bots=20)
    rows = result["validate"]
    assert [r["exit"] for r in rows] == [0, 0], rows
    assert "30 bots" in rows[0]["said"] and "swiss" in rows[0]["said"] and "780 groups" in rows[1]["said"]
    assert all(r["peak_mb"] > 0 and r["wall_s"] > 0 for r in rows)
    assert result["first_game_s"] is not None and result["first_game_s"] > 0


@pytest.mark.slow
def test_bench_tournament_with_bots_reports_the_share_of_in_process_speed():
    from arena.bench import tournament as bench

    result = bench.bench_tournament(rounds=1, play="bots", repeat=1)
    for n in (1, 2):
        assert result[f"bots_vs_inprocess_{n}"] == result[f"games_per_s_{n}"] / result[f"inprocess_games_per_s_{n}"]
        assert result[f"inprocess_games_per_s_{n}"] > 0


def test_bench_tournament_takes_any_list_of_worker_counts_and_splits_a_bot_process_games_cpu():
    result = CliRunner().invoke(app, ["bench", "tournament", "--play", "bots", "--groups", "1", "--repeat", "1",
                                      "--concurrency", "1,3", "--sandbox", "basic", "--no-cgroups", "--json"])
    assert result.exit_code == 0, result.output
    figures = json.loads(result.stdout)
    assert figures["concurrency"] == [1, 3] and [s["workers"] for s in figures["steps"]] == [1, 3]
    assert figures["sandbox"] == "basic" and figures["cgroups"] is False
    for n in (1, 3):
        step = figures["steps"][[1, 3].index(n)]
        assert step["games"] == 6 and step["games_per_s"] == figures[f"games_per_s_{n}"] > 0
        assert 0 < step["transport_ms"] < step["referee_ms"]  # the pipes are part of the referee's CPU
        assert step["bots_ms"] > 0 and step["startup_ms"] > 0 and step["store_ms_per_game"] > 0
        assert step["referee_share"] == step["referee_ms"] / (step["referee_ms"] + step["bots_ms"])
        assert step["cpu_ms_per_game"] > step["referee_ms"] + step["bots_ms"]  # and the start-up, the store
    assert figures["speedup"] == figures["games_per_s_3"] / figures["games_per_s_1"]


@pytest.mark.parametrize("args, said", [
    (["--concurrency", "0,2"], "--concurrency '0,2': give worker counts from 1 to 256"),
    (["--concurrency", "two"], "--concurrency 'two'"),
    (["--sandbox", "iron"], "--sandbox 'iron': give one of none, basic, strict, auto"),
])
def test_bench_tournament_refuses_bad_options_in_a_sentence(args, said):
    result = CliRunner().invoke(app, ["bench", "tournament", *args])
    assert result.exit_code == 2 and said in result.output and "Traceback" not in result.output


def _strict_child_cpu(adopt: bool, out) -> None:
    """In a forked process: a strict bot that burns some CPU; what RUSAGE_CHILDREN says, and
    the CPU the bot says it used."""
    import sys

    from arena.bench import tournament as bench
    from arena.process.sandbox import Sandbox

    if adopt:
        bench._adopt_orphans()
    kids0 = bench._kids_cpu()
    import subprocess

    burn = "import time; x = sum(range(15_000_000)); print(time.process_time())"
    launch = Sandbox("strict", use_cgroups=False).prepare([sys.executable, "-c", burn])
    try:
        done = subprocess.run(launch.argv, cwd=launch.cwd, env=launch.env, preexec_fn=launch.preexec_fn,
                              capture_output=True, text=True, check=False)
    finally:
        launch.cleanup()
    reaped = bench._reap_adopted() if adopt else 0
    out.send((bench._kids_cpu() - kids0, reaped, float(done.stdout.split()[-1])))


@pytest.mark.parametrize("adopt", [False, True])
def test_a_strict_bots_cpu_reaches_the_bench_only_when_it_adopts_bubblewraps_orphans(adopt):
    """bubblewrap leaves its PID namespace's first process unwaited: without adopting it the
    bench saw none of a strict bot's CPU (its CPU per game fell below the bots' own share)."""
    import multiprocessing

    from strict_check import require_strict

    require_strict()
    ctx = multiprocessing.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_strict_child_cpu, args=(adopt, send))
    proc.start()
    cpu, reaped, used = recv.recv()
    proc.join()
    if adopt:
        assert reaped >= 1 and cpu > 0.8 * used, (cpu, reaped, used)
    else:
        assert cpu < 0.2 * used, (cpu, used)  # the behaviour the adoption is there for
