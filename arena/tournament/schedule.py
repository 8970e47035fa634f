"""The schedule: which bots sit at which table, in seat-rotated groups with one deal.

A *table* is an ordered tuple of bot names, one per seat. Every table is played as a
*group*: for N seats, N games with the same seed (so the same deal, R1.5) and the seats
rotated, so that every bot plays every seat once and the luck of the deal and of the seat
order cancel out within the group. Each game has a key ``name:group:rotation:seed``; a
resumed run plays the schedule minus the stored keys.

Tables come from one *cycle* per round: round robin -- every set of N bots (every pair at
two seats); gauntlet -- the hero with every set of N-1 bots of the field; sprt -- the
candidate with N-1 seats of the baseline. Within a cycle tables are ordered greedily so
that any prefix keeps the number of meetings of every pair of bots as even as possible
(which matters when ``games`` cuts a cycle short: a full cycle is exactly even, a
prefix stays within a couple of meetings). At three and four seats the seat order
of each table is shuffled by the group's seed, so no bot always moves right after another.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import random
from dataclasses import dataclass
from typing import Iterator

from .config import TournamentConfig


@dataclass(frozen=True)
class GameTask:
    """One scheduled game: its key, group, rotation, seed and the bot name in each seat."""

    key: str
    group: int
    rotation: int
    seed: int
    bots: tuple[str, ...]


def group_seed(seed: int, group: int) -> int:
    """The deal seed of a group: a hash of the tournament seed and the group index."""
    digest = hashlib.sha256(f"{seed}:{group}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def game_key(name: str, group: int, rotation: int, seed: int) -> str:
    """The unique key of a game: ``name:group:rotation:seed``."""
    return f"{name}:{group}:{rotation}:{seed}"


def cycle(cfg: TournamentConfig) -> list[tuple[str, ...]]:
    """The tables of one round, in a prefix-balanced order."""
    names = [b.name for b in cfg.bots]
    n = cfg.seats
    if n == 1:
        return [(name,) for name in names]
    if cfg.format == "round-robin":
        tables = list(itertools.combinations(names, n))
    elif cfg.format == "gauntlet":
        hero = cfg.format_options["hero"]
        field = [x for x in names if x != hero]
        tables = [(hero,) + combo for combo in itertools.combinations(field, n - 1)]
    else:
        opts = cfg.format_options
        tables = [(opts["candidate"],) + (opts["baseline"],) * (n - 1)]
    return balanced_order(tables)


def balanced_order(tables: list[tuple[str, ...]]) -> list[tuple[str, ...]]:
    """Order ``tables`` so that every prefix spreads the pair meetings as evenly as possible."""
    met: dict[frozenset, int] = {}
    seen: dict[str, int] = {}
    left = list(tables)
    out = []
    while left:
        def cost(table):
            pairs = [frozenset(p) for p in itertools.combinations(table, 2) if p[0] != p[1]]
            return (sum(met.get(p, 0) ** 2 for p in pairs), sum(seen.get(b, 0) for b in table))
        best = min(left, key=cost)
        left.remove(best)
        out.append(best)
        for p in itertools.combinations(best, 2):
            met[frozenset(p)] = met.get(frozenset(p), 0) + 1
        for b in best:
            seen[b] = seen.get(b, 0) + 1
    return out


def group_count(cfg: TournamentConfig) -> int:
    """How many groups the schedule holds (for sprt: the most it may play)."""
    if cfg.rounds is not None:
        return cfg.rounds * len(cycle(cfg))
    return math.ceil(cfg.games / cfg.seats)


def total_games(cfg: TournamentConfig) -> int:
    """How many games the schedule holds (for sprt: the most it may play)."""
    return group_count(cfg) * cfg.seats


def group_table(cfg: TournamentConfig, tables: list[tuple[str, ...]], group: int) -> tuple[str, ...]:
    """The table of ``group`` in seat order of rotation 0."""
    table = tables[group % len(tables)]
    if cfg.seats >= 3:
        rng = random.Random(group_seed(cfg.seed, group))
        first, rest = table[0], list(table[1:])
        rng.shuffle(rest)
        table = (first, *rest)
    return table


def rotate(table: tuple[str, ...], rotation: int) -> tuple[str, ...]:
    """Seat s of rotation r gets the bot at position (s + r) mod N of the table."""
    n = len(table)
    return tuple(table[(s + rotation) % n] for s in range(n))


def schedule(cfg: TournamentConfig, start_group: int = 0) -> Iterator[GameTask]:
    """Every scheduled game in order, lazily, from group ``start_group``."""
    tables = cycle(cfg)
    for group in range(start_group, group_count(cfg)):
        seed = group_seed(cfg.seed, group)
        table = group_table(cfg, tables, group)
        for rotation in range(cfg.seats):
            yield GameTask(game_key(cfg.name, group, rotation, seed), group, rotation, seed, rotate(table, rotation))
