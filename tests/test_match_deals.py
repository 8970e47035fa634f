"""``arena match --noswap`` (one game a deal, cutechess-cli's -noswap) and ``--deals BOOK
--deals-order random --deals-start N`` (cutechess-cli's -openings order= start=)."""

from __future__ import annotations

import json

from arena.tournament.config import load_config
from cli_helpers import run


def _book(tmp_path, count: int = 10):
    book = tmp_path / "book.jsonl"
    run("deals", "make", "--count", count, "--seed", 3, "--out", book)
    return book, [json.loads(x) for x in book.read_text().splitlines() if x.strip() and not x.startswith("#")]


def test_noswap_plays_each_deal_once_and_the_sprt_counts_games(tmp_path):
    out = tmp_path / "n"
    r = run("match", "greedy", "random", "--noswap", "--games", 6, "-j", 1, "--inprocess", "--no-replays",
            "--output", out)
    lines = [json.loads(x) for x in (out / "games.jsonl").read_text().splitlines()]
    assert [(g["group"], g["rotation"], g["bots"]) for g in lines] == [(i, 0, ["greedy", "random"]) for i in range(6)]
    assert "6 of 6 stored" in r.stdout and "over 6 games" not in r.stdout
    assert "every game scored alike so far (6 games)" in r.stdout
    # the sprt decides on single games (a group of one)
    s = json.loads(run("match", "greedy", "random", "--noswap", "--sprt", "elo0=0", "elo1=200", "-j", 1,
                       "--inprocess", "--no-replays", "--output", tmp_path / "s", "--json").stdout)
    assert s["sprt"]["decision"] == "H1" and s["summary"]["stored"] == s["sprt"]["groups"]
    # with seat swaps the same folder is another schedule
    other = run("match", "greedy", "random", "--games", 6, "--inprocess", "--no-replays", "--output", out, ok=False)
    assert "differs in: swap" in other.stderr
    run("match", "greedy", "random", "--noswap", "--games", 6, "--write-yaml", tmp_path / "n.yaml")
    assert load_config(tmp_path / "n.yaml").rotations == 1


def test_deals_start_and_random_order(tmp_path):
    book, deals = _book(tmp_path)
    run("match", "greedy", "random", "--deals", book, "--deals-start", 3, "--write-yaml", tmp_path / "s.yaml")
    cfg = load_config(tmp_path / "s.yaml")
    assert [cfg.deal_for(g) for g in range(10)] == deals[2:] + deals[:2]  # from deal 3, cycled
    run("match", "greedy", "random", "--deals", book, "--deals-order", "random", "--seed", 5,
        "--write-yaml", tmp_path / "r.yaml")
    shuffled = [load_config(tmp_path / "r.yaml").deal_for(g) for g in range(10)]
    assert shuffled != deals and sorted(map(json.dumps, shuffled)) == sorted(map(json.dumps, deals))
    assert [load_config(tmp_path / "r.yaml").deal_for(g) for g in range(10)] == shuffled  # the seed decides
    # the games play those deals: the replay of group 0 holds deal 3 of the book
    out = tmp_path / "m"
    run("match", "greedy", "random", "--deals", book, "--deals-start", 3, "--games", 2, "-j", 1, "--inprocess",
        "--output", out, "--quiet")
    replay = json.loads((out / "replays" / "000000-0.json").read_text())
    assert replay["deal"] == deals[2]
    r = run("match", "greedy", "random", "--deals", book, "--deals-start", 11, "--output", out, ok=False)
    assert "--deals-start" in r.stderr and "no deal 11" in r.stderr
    r = run("match", "greedy", "random", "--deals-order", "random", "--output", out, ok=False)
    assert "give it with --deals BOOK" in r.stderr
