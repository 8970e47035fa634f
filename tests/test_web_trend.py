"""The leaderboard's rating history: a point per background fit kept in the league file,
bounded and thinned where it is oldest, and the small chart drawn of it in each row."""

from __future__ import annotations

import re

from engine import RuleSpec

from arena.league import League
from arena.web import store, views
from arena.web.chart import sparkline


def test_the_points_are_bounded_and_span_the_whole_history(tmp_path):
    path = tmp_path / "l.db"
    with League.create(path, RuleSpec(), 2, 0, {}, "none") as league:
        league.add("greedy", bot="greedy")
        league.add("random", bot="random")
    league = store.open_league(path)
    try:
        for k in range(1, 301):
            store.add_rating_point(league, 1000.0 + k, 10 * k, {"greedy": 0.0, "random": -float(k)}, limit=40)
            assert len(store.rating_points(league)) <= 40
        points = store.rating_points(league)
        games = [g for _, g, _ in points]
        assert games[0] == 10 and games[-1] == 3000 and games == sorted(games), "the first and newest fits stay"
        gaps = [b - a for a, b in zip(games, games[1:])]
        assert gaps[-1] == 10 and gaps[0] > 10, "finer where recent, coarser where old"
        trend = views.rating_trend(league)
        assert trend["random"][-1] == (3000, -300.0) and len(trend["greedy"]) == len(points)
    finally:
        league.close()


def test_a_sparkline_is_an_escaped_inline_svg():
    svg = sparkline([(10, 0.0), (20, 35.5), (30, 80.0)], "<b>x@1</b>")
    assert svg.startswith('<svg class="spark"') and "<polyline" in svg and "<b>" not in svg
    assert "&lt;b&gt;x@1&lt;/b&gt;: +0 after 10 games, +80 after 30 games (3 fits)" in svg
    assert "#1b7f2a" in svg  # rising: green
    assert re.fullmatch(r'<span class="muted">-</span>', sparkline([]))
    assert "<circle" in sparkline([(5, -10.0)])  # one fit: a point
