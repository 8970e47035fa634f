"""The schedule: seat rotation within groups, one deal per group, fair tables, stable keys."""

from __future__ import annotations

import itertools
import math
from collections import Counter
from pathlib import Path

import pytest

from engine import RuleSpec
from arena.tournament.config import BotEntry, TournamentConfig
from arena.tournament.schedule import balanced_order, cycle, group_count, rotate, schedule, total_games


def config(bots, seats=2, fmt="round-robin", rounds=1, games=None, **opts) -> TournamentConfig:
    rules = RuleSpec.make(["solo"]) if seats == 1 else RuleSpec.make()
    return TournamentConfig(
        name="t", path="t.yaml", rules=rules, seats=seats, bots=tuple(BotEntry(b, "greedy") for b in bots),
        format=fmt, format_options=opts, rounds=rounds, games=games, seed=9, time_control={}, fault_policy="forfeit",
        sandbox="none", concurrency=1, executor="local", address=None, play="inprocess", output=Path("out"),
        anchor=None, replays=False, pause_idle=False)


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_each_group_rotates_every_bot_through_every_seat_on_one_deal(seats):
    cfg = config("ABCDE", seats=seats, rounds=2)
    by_group: dict[int, list] = {}
    for task in schedule(cfg):
        by_group.setdefault(task.group, []).append(task)
    assert len(by_group) == group_count(cfg)
    for tasks in by_group.values():
        assert len(tasks) == seats
        assert len({t.seed for t in tasks}) == 1  # R1.5: one seed, one deal
        assert [t.rotation for t in tasks] == list(range(seats))
        for seat in range(seats):
            assert sorted(t.bots[seat] for t in tasks) == sorted(tasks[0].bots)


def test_rotation_moves_each_bot_one_seat():
    assert rotate(("A", "B", "C"), 0) == ("A", "B", "C")
    assert rotate(("A", "B", "C"), 1) == ("B", "C", "A")
    assert rotate(("A", "B", "C"), 2) == ("C", "A", "B")


@pytest.mark.parametrize("bots,seats", [("ABCD", 2), ("ABCDE", 3), ("ABCDEF", 4), ("ABCDE", 4)])
def test_round_robin_every_pair_meets_equally_often(bots, seats):
    cfg = config(bots, seats=seats, rounds=3)
    met = Counter()
    seats_of = Counter()
    for task in schedule(cfg):
        for a, b in itertools.combinations(sorted(task.bots), 2):
            met[(a, b)] += 1
        for s, bot in enumerate(task.bots):
            seats_of[(bot, s)] += 1
    assert set(met) == set(itertools.combinations(bots, 2))
    assert len(set(met.values())) == 1, met
    assert len(set(seats_of.values())) == 1, seats_of  # every bot sits in every seat equally often


def test_games_cut_short_keep_meetings_nearly_even():
    cfg = config("ABCDEFG", seats=4, rounds=None, games=40)  # 10 groups of the 35 tables
    met = Counter()
    for task in schedule(cfg):
        if task.rotation == 0:
            for pair in itertools.combinations(sorted(task.bots), 2):
                met[pair] += 1
    counts = [met.get(p, 0) for p in itertools.combinations("ABCDEFG", 2)]
    assert max(counts) - min(counts) <= 2, counts
    assert min(counts) >= 1


def test_balanced_order_spreads_early_tables():
    tables = list(itertools.combinations("ABCD", 2))
    first_two = balanced_order(tables)[:2]
    assert set(first_two[0]).isdisjoint(first_two[1])


def test_gauntlet_puts_the_hero_at_every_table():
    cfg = config("HABC", seats=3, fmt="gauntlet", rounds=1, hero="H")
    tables = cycle(cfg)
    assert len(tables) == 3 and all(t[0] == "H" for t in tables)
    assert all(task.bots.count("H") == 1 for task in schedule(cfg))


def test_sprt_tables_are_candidate_and_baseline_copies():
    cfg = config("CB", seats=3, fmt="sprt", rounds=None, games=30, candidate="C", baseline="B")
    tasks = list(schedule(cfg))
    assert len(tasks) == total_games(cfg) == 30
    assert all(sorted(t.bots) == ["B", "B", "C"] for t in tasks)


def test_solo_schedules_one_seat_games():
    cfg = config("AB", seats=1, rounds=None, games=6)
    tasks = list(schedule(cfg))
    assert len(tasks) == 6 and all(len(t.bots) == 1 and t.rotation == 0 for t in tasks)
    assert Counter(t.bots[0] for t in tasks) == {"A": 3, "B": 3}


def test_keys_are_unique_and_stable():
    cfg = config("ABC", seats=2, rounds=4)
    first = [t.key for t in schedule(cfg)]
    assert len(set(first)) == len(first) == total_games(cfg) == 24
    assert first == [t.key for t in schedule(cfg)]
    assert all(k.startswith("t:") and len(k.split(":")) == 4 for k in first)
    assert len({t.seed for t in schedule(cfg)}) == group_count(cfg)  # a new deal per group


def _no_listing(*_a, **_k):
    raise AssertionError("a big cycle must not be listed")


@pytest.mark.parametrize("fmt,bots,seats,opts", [("gauntlet", 2000, 2, {"hero": "b0"}),
                                                 ("round-robin", 2000, 2, {}),
                                                 ("round-robin", 80, 4, {}),
                                                 ("gauntlet", 300, 4, {"hero": "b0"})])
def test_a_big_field_schedules_its_first_games_without_listing_the_cycle(monkeypatch, fmt, bots, seats, opts):
    import arena.tournament.schedule as sched

    cfg = config([f"b{i}" for i in range(bots)], seats=seats, fmt=fmt, **opts)
    monkeypatch.setattr(sched.itertools, "combinations", _no_listing)
    monkeypatch.setattr(sched, "balanced_order", _no_listing)
    first = list(itertools.islice(schedule(cfg), 40))
    assert len(first) == 40 and all(len(set(t.bots)) == seats for t in first)
    assert total_games(cfg) == math.comb(bots - (fmt == "gauntlet"), seats - (fmt == "gauntlet")) * seats
    if fmt == "gauntlet":
        assert all("b0" in t.bots for t in first)


@pytest.mark.parametrize("n", [2, 3, 7, 10, 31])
def test_pairs_by_the_circle_method_cover_every_pair_once_and_even_by_round(n):
    from arena.tournament.schedule import Circle

    names = [f"b{i}" for i in range(n)]
    tables = list(Circle(names))
    assert len(tables) == n * (n - 1) // 2 == len({frozenset(t) for t in tables})
    per_round = n // 2
    for r in range(1, len(tables) // per_round + 1):
        counts = Counter(b for t in tables[:r * per_round] for b in t)
        assert max(counts.values()) - min(counts.get(b, 0) for b in names) <= 1


def test_strided_subsets_are_each_subset_once():
    from arena.tournament.schedule import Strided

    tables = list(Strided([f"b{i}" for i in range(14)], 3))
    assert len(tables) == math.comb(14, 3) == len({frozenset(t) for t in tables})


def test_an_absurd_round_robin_is_refused_with_its_game_count(tmp_path):
    from arena.tournament.config import load_config
    from arena.tournament.yamlsource import ConfigError

    path = tmp_path / "big.yaml"
    path.write_text("name: big\nseats: 4\nbots:\n" + "".join(f"  - {{name: b{i}, bot: random}}\n" for i in range(400)))
    with pytest.raises(ConfigError) as err:
        load_config(path)
    text = str(err.value)
    assert f"{math.comb(400, 4) * 4:,} games" in text and "gauntlet" in text and "swiss" in text and "league" in text
