"""``arena bench serve``: its two mixes of pages (the light pages, and what visitors really
fetch: replay pages, bot pages, the live API) and the command as a user types it. The
command's test starts a real ``arena serve`` on 127.0.0.1 for a few seconds, loopback only."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from arena.bench.serve_load import PAGES, VISITOR_PAGES, Pages, figures, followed_game, kind_of
from cli_helpers import run


@pytest.mark.parametrize("path, kind", [
    ("/game/12/replay", "replay"), ("/game/12", "game"), ("/api/games/12", "game"),
    ("/bot/greedy", "bot"), ("/bot/greedy/games", "bot"), ("/api/bots/greedy", "bot"),
    ("/api/games/live", "live_api"), ("/api/games/live/3/1", "live_api"),
    ("/live", "live"), ("/live/3/1", "live"), ("/live/3/1/replay?n=4", "live"),
    ("/", "other"), ("/rules", "other"), ("/api/leaderboard", "other"), ("/author/nobody", "other"),
])
def test_each_page_has_its_kind(path, kind):
    assert kind_of(path) == kind


def test_the_real_visitor_mix_asks_for_replay_pages_bot_pages_and_the_live_api():
    kinds = {kind_of(p.format(game=1, bot="greedy", live="3/1")) for p in VISITOR_PAGES}
    assert {"replay", "bot", "live", "live_api"} <= kinds
    assert "replay" not in {kind_of(p.format(game=1)) for p in PAGES}  # the light mix asks for none


def test_visitors_spread_over_the_games_and_follow_only_a_game_they_read_of():
    pages = Pages(VISITOR_PAGES, games=tuple(range(1, 201)), bots=("greedy", "random"))
    n = len(VISITOR_PAGES)
    replays = {pages.at(v, r * n + 1, None) for v in range(20) for r in range(3)}
    assert len(replays) == 60  # every visitor a game of its own, another each round
    first = [pages.at(0, i, None) for i in range(n)]
    assert first[0] == "/game/1" and first[1] == "/game/1/replay"  # a game's page, then its replay
    assert not any(p and "live/" in p for p in first)  # no game in flight known: none followed
    assert "/api/games/live/7/1" in [pages.at(0, i, "7/1") for i in range(n)]
    assert Pages(["/rules"]).at(3, 5, None) == "/rules"


@pytest.mark.parametrize("body, visitor, game", [
    (b'{"games": [{"group": 4, "rotation": 0}, {"group": 5, "rotation": 1}]}', 0, "5/1"),
    (b'{"games": [{"group": 4, "rotation": 0}, {"group": 5, "rotation": 1}]}', 1, "4/0"),
    (b'{"games": []}', 0, None), (b"not json", 0, None), (b'{"games": [{"group": "x"}]}', 0, None),
])
def test_a_visitor_follows_a_game_the_live_list_names(body, visitor, game):
    assert followed_game(body, visitor) == game


def test_figures_per_kind_count_bytes_and_statuses():
    seen = [("replay", 0.010, 100_000, 200), ("replay", 0.030, 120_000, 200), ("live", 0.001, 0, 303),
            ("bot", 0.002, 8_000, 200)]
    out = figures(seen, [], 2.0, 4)
    assert out["requests"] == 4 and out["requests_per_s"] == 2.0 and out["errors"] == 0
    assert out["mb_per_s"] == 0.11
    assert out["kinds"]["replay"] == {"requests": 2, "kb_per_answer": 110.0, "kb_median": 120.0, "p50_ms": 30.0,
                                      "p95_ms": 30.0, "max_ms": 30.0, "statuses": {"200": 2}}
    assert out["kinds"]["live"]["statuses"] == {"303": 1}
    assert list(out["kinds"]) == ["replay", "bot", "live"]  # the order a report gives


@pytest.mark.parametrize("args, said", [
    (["--mix", "heavy"], "--mix"), (["--play", "sometimes"], "--play"), (["--clients", "many"], "--clients"),
    (["--clients", "0"], "--clients"),
    (["--mix", "real-visitor", "--games", "0"], "--games 1 or more"),
])
def test_bad_options_are_refused_in_a_sentence(args, said):
    result = run("bench", "serve", *args, ok=False, one_line=True)
    assert result.exit_code == 2 and said in result.stderr


@pytest.mark.slow
def test_bench_serve_reports_both_mixes_with_and_without_the_hog(tmp_path):
    out = subprocess.run([sys.executable, "-m", "arena.cli", "bench", "serve", "--clients", "4", "--seconds", "2",
                          "--play", "on", "--games", "30", "--hog", "40", "--json"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stderr[-3000:]
    results = json.loads(out.stdout)["results"]
    rows = {(r["mix"], bool(r.get("hog"))): r for r in results}
    assert set(rows) == {("light", False), ("real-visitor", False), ("light", True), ("real-visitor", True)}
    for r in results:
        assert r["play"] is True and r["clients"] == 4
        assert r["requests"] > 0 and r["requests_per_s"] > 0 and r["mb_per_s"] > 0, r
        assert r["errors"] == 0, r["error_examples"]
        assert r["p50_ms"] <= r["p95_ms"] <= r["p99_ms"]
    assert rows["light", True]["hog"]["sockets"] == 40
    for hog in (False, True):
        kinds = rows["real-visitor", hog]["kinds"]
        replay = kinds["replay"]
        assert replay["requests"] > 0 and replay["statuses"] == {"200": replay["requests"]}, replay
        assert replay["kb_median"] > 40, replay  # the replay viewer of a game: about 100 KB
        assert kinds["bot"]["requests"] > 0 and kinds["live_api"]["requests"] > 0, kinds
        assert kinds["live"]["requests"] > 0, kinds  # a game in flight followed (the league plays)
        assert "replay" not in rows["light", hog]["kinds"]
    # the league played through bot processes while the visitors fetched
    assert sum(r["games_played"] for r in results if not r.get("hog")) > 0
