"""The schedule: which bots sit at which table, in seat-rotated groups with one deal.

A *table* is an ordered tuple of bot names, one per seat. Every table is played as a
*group*: for N seats, N games with the same seed (so the same deal, R1.5) and the seats
rotated, so that every bot plays every seat once and the luck of the deal and of the seat
order cancel out within the group. Each game has a key ``name:group:rotation:seed``; a
resumed run plays the schedule minus the stored keys.

Tables come from one *cycle* per round: round robin -- every set of N bots (every pair at
two seats); gauntlet -- the hero with every set of N-1 bots of the field; sprt -- the
candidate with N-1 seats of the baseline. (Swiss pairs round by round from the results:
:mod:`arena.tournament.swiss`.) Within a cycle tables are ordered so that any prefix keeps
the bots' tables and the pair meetings as even as possible (which matters when ``games``
cuts a cycle short): pairs by the circle method (every bot once per round), small cycles
of three or four seats greedily, big ones by a stride through the subsets. A cycle is
never listed: ``tables[i]`` is computed when group ``i`` is scheduled, so the schedule
of a field of thousands starts at once and costs memory for nothing but the group in
hand. At three and four seats the seat order of each table is shuffled by the group's
seed, so no bot always moves right after another.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import random
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Iterator

from ..execution.work import WAIT  # noqa: F401 -- what a lazy schedule yields (Swiss, knockout)
from .config import TournamentConfig
from .sizes import cycle_length, total_groups


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


#: at most this many tables are ordered by the greedy :func:`balanced_order` (quadratic);
#: bigger cycles of three or four seats use the strided order of :class:`Strided`
GREEDY_TABLES = 200


class Tables(ABC):
    """The tables of one cycle, computed on demand: ``len(tables)`` and ``tables[i]`` cost
    O(seats) or O(seats log n), never a list of the whole cycle."""

    @abstractmethod
    def __len__(self) -> int:
        """How many tables the cycle has."""

    @abstractmethod
    def __getitem__(self, i: int) -> tuple[str, ...]:
        """Table ``i``: the bots' names in seat order."""

    def __iter__(self):
        return (self[i] for i in range(len(self)))


class Listed(Tables):
    """A small cycle, held as a list."""

    def __init__(self, tables: list[tuple[str, ...]]):
        self.tables = tables

    def __len__(self) -> int:
        return len(self.tables)

    def __getitem__(self, i: int) -> tuple[str, ...]:
        return self.tables[i]


class Circle(Tables):
    """Every pair of ``names`` once, by the circle method (Berger tables), each table
    prefixed by ``head`` (a gauntlet's hero). The cycle is ``n - 1`` rounds (``n`` for an
    odd count, one bot sitting out each round) in which every bot plays once, so any
    prefix of whole rounds gives every bot the same number of tables and no pair meets
    twice."""

    def __init__(self, names: list[str], head: tuple[str, ...] = ()):
        self.names = names
        self.head = head
        n = len(names)
        self.odd = n % 2
        self.m = n + self.odd  # with a stand-in when odd: the fixed element, whose partner sits out
        self.per_round = n // 2

    def __len__(self) -> int:
        n = len(self.names)
        return n * (n - 1) // 2

    def __getitem__(self, i: int) -> tuple[str, ...]:
        if not 0 <= i < len(self):
            raise IndexError(i)
        r, j = divmod(i, self.per_round)
        j += self.odd  # position 0 pairs the fixed element: the stand-in when odd
        k = self.m - 1
        if j == 0:
            a, b = k, r
        else:
            a, b = (r + j) % k, (r - j) % k
        a, b = min(a, b), max(a, b)
        return self.head + (self.names[a], self.names[b])


class Strided(Tables):
    """Every ``k``-subset of ``names`` once (prefixed by ``head``), visited in a stride
    through their colex ranks: rank ``(i * stride) mod C(n, k)`` with the stride near
    ``C(n, k)`` divided by the golden ratio and coprime to it, which spreads the bots of
    any prefix evenly without listing the subsets (an unranking costs O(k log n))."""

    def __init__(self, names: list[str], k: int, head: tuple[str, ...] = ()):
        self.names = names
        self.k = k
        self.head = head
        self.total = math.comb(len(names), k)
        stride = max(1, int(self.total / 1.6180339887))
        while math.gcd(stride, self.total) != 1:
            stride += 1
        self.stride = stride

    def __len__(self) -> int:
        return self.total

    def __getitem__(self, i: int) -> tuple[str, ...]:
        if not 0 <= i < self.total:
            raise IndexError(i)
        rank = (i * self.stride) % self.total
        out = []
        hi = len(self.names)
        for size in range(self.k, 0, -1):  # the largest c < hi with C(c, size) <= rank
            lo_c, hi_c = size - 1, hi - 1
            while lo_c < hi_c:
                mid = (lo_c + hi_c + 1) // 2
                if math.comb(mid, size) <= rank:
                    lo_c = mid
                else:
                    hi_c = mid - 1
            out.append(lo_c)
            rank -= math.comb(lo_c, size)
            hi = lo_c
        return self.head + tuple(self.names[c] for c in reversed(out))


def subsets(names: list[str], k: int, head: tuple[str, ...] = ()) -> Tables:
    """Every ``k``-subset of ``names`` (prefixed by ``head``), in a prefix-balanced order."""
    if k == 1:
        return Listed([head + (x,) for x in names]) if len(names) <= GREEDY_TABLES else _Single(names, head)
    if k == 2:
        return Circle(names, head)
    if math.comb(len(names), k) <= GREEDY_TABLES:
        return Listed(balanced_order([head + c for c in itertools.combinations(names, k)]))
    return Strided(names, k, head)


class Chained(Tables):
    """Several cycles one after the other (a gauntlet's heroes, each with the field)."""

    def __init__(self, parts: list[Tables]):
        self.parts = parts
        self.sizes = [len(p) for p in parts]

    def __len__(self) -> int:
        return sum(self.sizes)

    def __getitem__(self, i: int) -> tuple[str, ...]:
        for part, size in zip(self.parts, self.sizes):
            if i < size:
                return part[i]
            i -= size
        raise IndexError(i)


class _Single(Tables):
    def __init__(self, names: list[str], head: tuple[str, ...]):
        self.names, self.head = names, head

    def __len__(self) -> int:
        return len(self.names)

    def __getitem__(self, i: int) -> tuple[str, ...]:
        return self.head + (self.names[i],)


def cycle(cfg: TournamentConfig) -> Tables:
    """The tables of one round, in a prefix-balanced order, computed on demand."""
    names = [b.name for b in cfg.bots]
    n = cfg.seats
    if n == 1:
        return _Single(names, ())
    if cfg.format == "round-robin":
        return subsets(names, n)
    if cfg.format == "swiss":
        raise ValueError("a swiss schedule depends on results: use arena.tournament.swiss.SwissPlan")
    if cfg.format == "knockout":
        raise ValueError("a knockout schedule depends on results: use arena.tournament.knockout.KnockoutPlan")
    if cfg.format == "gauntlet":
        heroes = names[:cfg.format_options.get("seeds", 0)] or [cfg.format_options["hero"]]
        field = [x for x in names if x not in heroes]
        return Chained([subsets(field, n - 1, (hero,)) for hero in heroes])
    opts = cfg.format_options
    return Listed([(opts["candidate"],) + (opts["baseline"],) * (n - 1)])


def balanced_order(tables: list[tuple[str, ...]]) -> list[tuple[str, ...]]:
    """Order ``tables`` so that every prefix spreads the pair meetings as evenly as possible
    (greedy and quadratic: for small cycles only, see :data:`GREEDY_TABLES`)."""
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
    """How many groups the schedule holds (for sprt and knockout: the most it may play)."""
    if cfg.format == "knockout":
        return total_groups(cfg)
    if cfg.rounds is not None:
        return cfg.rounds * cycle_length(cfg)
    return math.ceil(cfg.games / cfg.rotations)


def total_games(cfg: TournamentConfig) -> int:
    """How many games the schedule holds (for sprt and knockout: the most it may play)."""
    return group_count(cfg) * cfg.rotations


def group_table(cfg: TournamentConfig, tables: Tables, group: int) -> tuple[str, ...]:
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
        for rotation in range(cfg.rotations):  # every seat of the deal, or only the first (swap: false)
            yield GameTask(game_key(cfg.name, group, rotation, seed), group, rotation, seed, rotate(table, rotation))

