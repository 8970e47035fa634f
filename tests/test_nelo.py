"""Normalized Elo (nElo) as fastchess prints it, beside Elo in the match report and the
standings: ``(m - 1/2) / sqrt(2 v) * 800 / ln 10`` over the pair scores."""

from __future__ import annotations

import csv
import io
import json
import math

import pytest
from typer.testing import CliRunner

from arena.cli import app
from arena.tournament.sprt import nelo


def test_nelo_is_fastchess_pentanomial_formula():
    # pentanomial counts LL 0, LD 1, DD+WL 3, WD 2, WW 2 -> pair scores
    scores = [0.25] + [0.5] * 3 + [0.75] * 2 + [1.0] * 2
    m = sum(scores) / 8
    v = sum((x - m) ** 2 for x in scores) / 8  # over the pairs, as fastchess
    out = nelo(scores)
    assert out["nelo"] == pytest.approx((m - 0.5) / math.sqrt(2 * v) * 800 / math.log(10))
    assert out["nelo"] == pytest.approx(154.76, abs=0.01) and out["nelo_error"] == pytest.approx(170.24, abs=0.01)
    assert out["nelo_error"] == pytest.approx(1.959963984540054 / math.sqrt(16) * 800 / math.log(10))
    assert nelo([0.5, 0.5, 0.5]) is None and nelo([1.0]) is None


def test_nelo_stands_beside_elo_in_the_match_report_and_the_standings(tmp_path):
    from arena.cli.match import Tally
    from arena.tournament.config import load_config
    from arena.tournament.store import Store

    out = tmp_path / "m"
    path = tmp_path / "t.yaml"
    # two different bots: two copies of one bot, seeded by seat, mirror each other in a pair (every pair 1/2)
    path.write_text(f"name: t\nbots: [{{name: one, bot: learned}}, {{name: two, bot: planner-fast}}]\ngames: 60\n"
                    f"executor: inprocess\nconcurrency: 1\nreplays: false\noutput: {out}\n")
    r = CliRunner().invoke(app, ["run", str(path), "--no-progress"])
    assert r.exit_code == 0, r.output
    store = Store.open(out, create=False)
    try:
        games = store.games()
    finally:
        store.close()
    lines = Tally(load_config(path), games).report_lines()
    assert any(x.startswith("  Elo ") and ", nElo " in x for x in lines), lines
    rep = json.loads(CliRunner().invoke(app, ["standings", str(out), "--json"]).stdout)
    rows = {x["bot"]: x for x in rep["standings"]}
    anchor = rep["ratings"]["anchor"]
    other = next(b for b in rows if b != anchor)
    assert rows[anchor]["nelo"] == 0.0  # the anchor, like its Elo
    cell = next(c for c in rep["head_to_head"] if c["bot"] == other)
    assert cell["nelo"] == rows[other]["nelo"]
    text = CliRunner().invoke(app, ["standings", str(out)]).stdout
    assert " nelo " in text and "one vs two: nElo " in text
    table = list(csv.DictReader(io.StringIO(CliRunner().invoke(app, ["standings", str(out), "--csv"]).stdout)))
    assert float(table[0]["nelo"]) == pytest.approx(rows[table[0]["bot"]]["nelo"])


def test_single_games_take_the_game_formula_as_fastchess_prints_wdl():
    """W 60 D 20 L 20 of single games: fastchess's EloWDL prints (m - 1/2) / sqrt(v) * 800 / ln 10
    (+173.7 +/- 68.1); the pair formula gave 1/sqrt(2) of it (+122.8)."""
    scores = [1.0] * 60 + [0.5] * 20 + [0.0] * 20
    m = sum(scores) / 100
    v = sum((x - m) ** 2 for x in scores) / 100
    out = nelo(scores, single=True)
    assert out["nelo"] == pytest.approx((m - 0.5) / math.sqrt(v) * 800 / math.log(10))
    assert out["nelo"] == pytest.approx(173.72, abs=0.01) and out["nelo_error"] == pytest.approx(68.09, abs=0.01)
    assert out["games"] == 100 and nelo(scores)["nelo"] == pytest.approx(out["nelo"] / math.sqrt(2))


def test_a_match_without_seat_swaps_prints_the_nelo_of_games(tmp_path):
    from arena.cli.match import Tally
    from arena.tournament.config import load_config
    from arena.tournament.store import Store

    out = tmp_path / "m"
    path = tmp_path / "t.yaml"
    path.write_text(f"name: t\nbots: [{{name: one, bot: random}}, {{name: two, bot: random}}]\ngames: 60\n"
                    f"swap: false\nexecutor: inprocess\nconcurrency: 1\nreplays: false\noutput: {out}\n")
    r = CliRunner().invoke(app, ["run", str(path), "--no-progress"])
    assert r.exit_code == 0, r.output
    store = Store.open(out, create=False)
    try:
        games = store.games()
    finally:
        store.close()
    scores = [1.0 if g["seats"][0]["rank"] < g["seats"][1]["rank"] else 0.0 if g["seats"][0]["rank"] >
              g["seats"][1]["rank"] else 0.5 for g in games]
    expected = nelo(scores, single=True)
    line = next(x for x in Tally(load_config(path), games).report_lines() if x.startswith("  Elo "))
    assert f", nElo {expected['nelo']:+.1f} +/- {expected['nelo_error']:.1f} over 60 games" in line, line
    ldw = [scores.count(0.0), scores.count(0.5), scores.count(1.0)]
    assert line.endswith(f"trinomial {ldw}"), line   # losses, draws, wins: fishtest's [L, D, W]
