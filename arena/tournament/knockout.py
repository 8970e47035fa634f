"""The knockout format: a seeded bracket, each tie a mini-match, the winner goes through.

A knockout (``format: {type: knockout, pairs: P, extra_pairs: E}``, two seats) seeds the
bots in the order of the file (the first is seed 1) into a bracket of ``B`` places, ``B``
the power of two at or above the bot count, placed as in tennis and chess cups: seed 1
meets seed ``B`` in the first round, seeds 1 and 2 can meet only in the final, and the
places without a bot are byes of the best seeds. Each tie is a mini-match of ``P``
seat-swapped pairs (two games on one deal each, every bot once in the first seat), like
every table of the other formats. The bot with more points (1 a win, 1/2 a draw) goes
through; a level tie plays one more pair at a time, at most ``E`` of them; still level,
the better seed goes through.

Each tie owns ``P + E`` group numbers, whether it plays them or not: tie ``t`` of round
``r`` has groups ``(ties before round r + t) * (P + E)`` onwards, so a game's key, seed and
deal are known before the tie is reached, and every decision is a function of the stored
results of the tie's own groups. A resumed run therefore rebuilds the same bracket from
the store and plays what is missing; a tie starts as soon as both its bots are known, not
when the whole round is over. :meth:`KnockoutPlan.tasks` feeds the runner and yields
:data:`~arena.tournament.schedule.WAIT` while the next games need results still in flight.
"""

from __future__ import annotations

from typing import Iterator

from .config import TournamentConfig
from .schedule import WAIT, GameTask, game_key, group_seed, rotate
from .sizes import bracket_size, rounds_of
from .standings import game_points


def seed_order(size: int) -> list[int]:
    """Seeds (1-based) in bracket order, two by two the first round's ties: ``[1, 8, 4, 5,
    2, 7, 3, 6]`` for 8, so that the better seed of each tie meets the best seeds last."""
    order = [1]
    while len(order) < size:
        n = 2 * len(order)
        order = [x for s in order for x in (s, n + 1 - s)]
    return order


class KnockoutPlan:
    """The bracket of ``cfg`` as results come in; see the module docstring."""

    def __init__(self, cfg: TournamentConfig, stored: list[dict] | None = None):
        self.cfg = cfg
        self.names = [b.name for b in cfg.bots]
        self.pairs = cfg.format_options["pairs"]
        self.extra = cfg.format_options["extra_pairs"]
        self.slots = self.pairs + self.extra
        self.size = bracket_size(len(self.names))
        self.rounds = rounds_of(len(self.names))
        order = seed_order(self.size)
        # the first round's entrants in bracket order: a bot index, or None for a bye
        self.entrants = [s - 1 if s <= len(self.names) else None for s in order]
        self.points: dict[int, dict[str, float]] = {}  # group -> bot -> points
        self.games: dict[int, int] = {}  # group -> games stored
        self.done: set[str] = set()
        self.failed: set[str] = set()
        self.issued: set[str] = set()
        for g in stored or ():
            self._count(g["key"], g["group"], [x["bot"] for x in g["seats"]], [x["rank"] for x in g["seats"]])

    def _count(self, key: str, group: int, bots: list[str], ranks: list[int]) -> None:
        if key in self.done:
            return
        self.done.add(key)
        self.games[group] = self.games.get(group, 0) + 1
        per = self.points.setdefault(group, {})
        for s, bot in enumerate(bots):
            per[bot] = per.get(bot, 0.0) + game_points(ranks, s)

    def stored(self, task: GameTask, ranks: list[int]) -> None:
        """A game of the plan was stored with these ranks."""
        self._count(task.key, task.group, list(task.bots), ranks)
        self.issued.discard(task.key)

    def lost(self, task: GameTask) -> None:
        """A game of the plan could not be played in this run: its tie cannot be decided."""
        self.failed.add(task.key)
        self.issued.discard(task.key)

    def first_group(self, r: int, t: int) -> int:
        """The first group number of tie ``t`` of round ``r``."""
        before = sum(self.size >> (k + 1) for k in range(r))
        return (before + t) * self.slots

    def tie_tasks(self, r: int, t: int, a: int, b: int, k: int) -> list[GameTask]:
        """The two games of the tie's pair ``k``: the better seed has the first seat of the first."""
        group = self.first_group(r, t) + k
        seed = group_seed(self.cfg.seed, group)
        table = (self.names[min(a, b)], self.names[max(a, b)])
        return [GameTask(game_key(self.cfg.name, group, rot, seed), group, rot, seed, rotate(table, rot))
                for rot in range(2)]

    def tie(self, r: int, t: int, a: int | None, b: int | None) -> dict:
        """Where tie ``t`` of round ``r`` between bots ``a`` and ``b`` stands: its
        ``winner`` (None while open), the pairs it needs now (``need``), ``points`` and ``how``."""
        out = {"round": r + 1, "tie": t + 1, "a": a, "b": b, "winner": None, "need": [], "points": [0.0, 0.0],
               "games": 0, "how": None}
        if a is None or b is None:
            out["winner"], out["how"] = (a if b is None else b), "bye"
            return out
        first = self.first_group(r, t)
        played = 0
        for k in range(self.slots):
            group = first + k
            if self.games.get(group, 0) < 2:
                break
            played = k + 1
            per = self.points[group]
            out["points"][0] += per.get(self.names[a], 0.0)
            out["points"][1] += per.get(self.names[b], 0.0)
            out["games"] += 2
            if played >= self.pairs and out["points"][0] != out["points"][1]:
                break
        pa, pb = out["points"]
        if played >= self.pairs and pa != pb:
            out["winner"] = a if pa > pb else b
            out["how"] = "points" if played == self.pairs else "extra pairs"
        elif played == self.slots:
            out["winner"], out["how"] = min(a, b), "seed"  # level after every extra pair: the better seed
        else:
            out["need"] = list(range(played, max(played + 1, self.pairs)))
        return out

    def bracket(self) -> list[list[dict]]:
        """Every round's ties as far as the stored results decide them."""
        entrants = list(self.entrants)
        out = []
        for r in range(self.rounds):
            ties = []
            nxt: list[int | None] = []
            for t in range(len(entrants) // 2):
                a, b = entrants[2 * t], entrants[2 * t + 1]
                if r > 0 and (a == -1 or b == -1):  # a bot still unknown: its tie before is open
                    ties.append({"round": r + 1, "tie": t + 1, "a": None if a == -1 else a,
                                 "b": None if b == -1 else b, "winner": None, "need": [], "points": [0.0, 0.0],
                                 "games": 0, "how": "waiting"})
                    nxt.append(-1)
                    continue
                tie = self.tie(r, t, a, b)
                ties.append(tie)
                nxt.append(-1 if tie["winner"] is None else tie["winner"])
            out.append(ties)
            entrants = nxt
        return out

    def tasks(self) -> Iterator:
        """Every game still to play, tie by tie as their bots are known; :data:`WAIT` while
        the next games need results in flight. Ends when the final is decided, or early if
        a game could not be played (run again)."""
        while True:
            todo = []
            for ties in self.bracket():
                for tie in ties:
                    for k in tie["need"]:
                        todo += [x for x in self.tie_tasks(tie["round"] - 1, tie["tie"] - 1, tie["a"], tie["b"], k)
                                 if x.key not in self.done and x.key not in self.issued]
            todo = [x for x in todo if x.key not in self.failed]  # a lost game: its tie waits for the next run
            if todo:
                for task in todo:
                    self.issued.add(task.key)
                    yield task
                continue
            if self.issued:
                yield WAIT
                continue
            return

    def champion(self) -> str | None:
        """The winner of the final, once decided."""
        final = self.bracket()[-1][0]
        return None if final["winner"] is None else self.names[final["winner"]]

    def summary(self) -> dict:
        """The bracket as plain data: every tie with its bots, points, games and how it was
        decided, and the champion."""
        rounds = []
        for ties in self.bracket():
            rounds.append([{"round": t["round"], "tie": t["tie"],
                            "bots": [None if x is None else self.names[x] for x in (t["a"], t["b"])],
                            "points": t["points"], "games": t["games"],
                            "winner": None if t["winner"] is None else self.names[t["winner"]], "how": t["how"]}
                           for t in ties])
        return {"rounds": rounds, "champion": self.champion(), "pairs": self.pairs, "extra_pairs": self.extra}
