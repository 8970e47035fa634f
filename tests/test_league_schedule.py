"""A league's tables are a function of stored results alone: the same games on one core,
on three, and (tests/test_cluster_boxed.py) on a Dask cluster."""

from __future__ import annotations

from typer.testing import CliRunner

from arena.cli import app
from arena.league import League
from arena.league.play import LOOKAHEAD_GROUPS

runner = CliRunner()


def league_games(path, jobs: int, games: int) -> list[tuple]:
    for argv in (["league", "new", str(path), "--seed", "11"],
                 *[["league", "add", str(path), name, "--bot", bot]
                   for name, bot in (("greedy", "greedy"), ("random", "random"), ("greedy@2", "greedy"),
                                     ("random@2", "random"))],
                 ["league", "play", str(path), "--games", str(games), "-j", str(jobs), "--no-progress"]):
        done = runner.invoke(app, argv)
        assert done.exit_code == 0, done.output
    with League.open(path) as lg:
        return sorted((g["group"], g["rotation"], g["seed"], tuple((s["bot"], s["score"]) for s in g["seats"]))
                      for g in lg.games())


def test_a_league_plays_the_same_games_at_any_concurrency(tmp_path):
    games = 2 * (LOOKAHEAD_GROUPS + 90)  # well past the groups whose tables follow the ratings
    one = league_games(tmp_path / "one.db", 1, games)
    three = league_games(tmp_path / "three.db", 3, games)
    assert len(one) == games and one == three
