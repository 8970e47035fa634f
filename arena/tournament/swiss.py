"""The Swiss format: a few rounds, each paired by score from the results of the rounds before.

A Swiss tournament (``format: swiss``, ``rounds: N``, two seats) plays N rounds. Every
round pairs the bots by their score so far; each pairing is played as one seat-rotated
group of two games on one deal (each bot has the first seat once), like every table of
the other formats. Round k+1 is paired only when every game of round k is stored, so the
runner feeds the executor from :meth:`SwissPlan.tasks`, which yields
:data:`~arena.tournament.schedule.WAIT` while a round's games are in flight.

Pairing rules (Monrad-style: simpler than FIDE's Dutch system, the same principles):

1. Score: the points of every game played (1 a win, 1/2 a draw, 0 a loss: the standings'
   points), plus 2 for a bye (a group won). Bots are ranked by score, then by their
   order in the file (the seeding).
2. Bye: with an odd count, the lowest-ranked bot that has not had a bye sits the round
   out (it gets a bye at most once while another bot has none).
3. Pairs: the highest-ranked unpaired bot meets the highest-ranked bot it has not met yet
   (1 v 2, 3 v 4, ... when nobody has met), provided the bots left can still be paired
   without a repeat; if not, it takes the next one (backtracking over the lowest-ranked
   part of the field). No pairing is ever repeated; when no pairing without a repeat
   exists at all (more rounds than the field allows), the pairing with the fewest
   repeats the greedy rule finds is taken and the run's log says so.
4. Seats: both bots of a pair play both seats (the group's two games). Who has the first
   seat of the group's first game alternates like colours in chess: the bot whose count
   of first seats minus second seats there is lower gets it (the higher-ranked one on a
   tie), which keeps every bot's difference small (within 2 in practice).

Keys are those of every format (``name:group:rotation:seed``); round ``r``'s pairings are
groups ``r * P`` to ``r * P + P - 1`` with ``P = bots // 2``. Pairings depend only on the
results of earlier rounds, so a resumed run pairs every round exactly as before and plays
what is missing, mid-round included.
"""

from __future__ import annotations

import logging
import sys
from typing import Iterator

from .config import TournamentConfig
from .schedule import WAIT, GameTask, game_key, group_seed, rotate
from .standings import game_points

log = logging.getLogger("arena.tournament")

BYE_POINTS = 2.0


def pair_round(ranking: list[int], met: list[set], byes: set) -> tuple[list[tuple[int, int]], int | None, int]:
    """Pairs of bot indices for one round, the bye (or None) and the number of repeats.

    ``ranking`` lists the bots best first; ``met[i]`` holds the bots ``i`` has met;
    ``byes`` the bots that have had a bye."""
    order = list(ranking)
    bye = None
    if len(order) % 2:
        bye = next((b for b in reversed(order) if b not in byes), order[-1])
        order.remove(bye)
    pairs = _greedy(order, met)
    if pairs is not None:
        return pairs, bye, 0
    width = 4
    while True:  # backtrack over a growing tail of the field
        width = min(len(order), width * 2)
        head = _greedy(order[:len(order) - width], met) if width < len(order) else []
        if head is not None:
            tail = _backtrack(order[len(order) - width:], met)
            if tail is not None:
                return head + tail, bye, 0
        if width >= len(order):
            break
    pairs = _least_repeats(order, met)  # no way without a repeat
    return pairs, bye, sum(1 for a, b in pairs if b in met[a])


def _greedy(order: list[int], met: list[set]) -> list[tuple[int, int]] | None:
    """Top down, each bot with the best-ranked bot it has not met; None if stuck."""
    left = list(order)
    pairs = []
    while left:
        a = left.pop(0)
        for j, b in enumerate(left):
            if b not in met[a]:
                pairs.append((a, b))
                del left[j]
                break
        else:
            return None
    return pairs


def _backtrack(order: list[int], met: list[set]) -> list[tuple[int, int]] | None:
    """The first pairing of ``order`` without a repeat in rank order (depth first), or None."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, len(order) + 100))
    try:
        out: list[tuple[int, int]] = []

        def solve(rest: list[int]) -> bool:
            if not rest:
                return True
            a = rest[0]
            for j in range(1, len(rest)):
                b = rest[j]
                if b in met[a]:
                    continue
                out.append((a, b))
                if solve(rest[1:j] + rest[j + 1:]):
                    return True
                out.pop()
            return False

        return out if solve(list(order)) else None
    finally:
        sys.setrecursionlimit(limit)


def _least_repeats(order: list[int], met: list[set]) -> list[tuple[int, int]]:
    left = list(order)
    pairs = []
    while left:
        a = left.pop(0)
        j = next((j for j, b in enumerate(left) if b not in met[a]), 0)
        pairs.append((a, left.pop(j)))
    return pairs


class SwissPlan:
    """The Swiss schedule of ``cfg`` as results come in; see the module docstring."""

    def __init__(self, cfg: TournamentConfig, stored: list[dict] | None = None):
        self.cfg = cfg
        self.names = [b.name for b in cfg.bots]
        self.index = {n: i for i, n in enumerate(self.names)}
        n = len(self.names)
        self.per_round = n // 2
        self.rounds = cfg.rounds or 1
        self.points = [[0.0] * n for _ in range(self.rounds)]  # points won in each round
        self.met: list[set] = [set() for _ in range(n)]
        self.byes: set = set()
        self.bye_of: list[int | None] = []
        self.firsts = [0] * n  # first seats minus second seats in the groups' first games
        self.pairings: list[list[tuple[str, str]]] = []
        self.repeats = 0
        self.done: set[str] = set()
        self.failed: set[str] = set()
        self.outstanding: set[str] = set()
        for g in stored or ():
            self._count(g["key"], g["group"], [x["bot"] for x in g["seats"]], [x["rank"] for x in g["seats"]])

    def _count(self, key: str, group: int, bots: list[str], ranks: list[int]) -> None:
        if key in self.done:
            return
        self.done.add(key)
        r = group // self.per_round
        if r >= self.rounds:
            return
        for s, bot in enumerate(bots):
            i = self.index.get(bot)
            if i is not None:
                self.points[r][i] += game_points(ranks, s)

    def stored(self, task: GameTask, ranks: list[int]) -> None:
        """A game of the plan was stored with these ranks."""
        self._count(task.key, task.group, list(task.bots), ranks)
        self.outstanding.discard(task.key)

    def lost(self, task: GameTask) -> None:
        """A game of the plan could not be played in this run: its round cannot complete."""
        self.failed.add(task.key)

    def scores(self, before_round: int) -> list[float]:
        """Every bot's score from the rounds before ``before_round`` (byes included)."""
        total = [0.0] * len(self.names)
        for r in range(before_round):
            for i, p in enumerate(self.points[r]):
                total[i] += p
            if self.bye_of[r] is not None:
                total[self.bye_of[r]] += BYE_POINTS
        return total

    def pair(self, r: int) -> list[tuple[str, str]]:
        """Pair round ``r`` (every earlier round must be paired and complete)."""
        score = self.scores(r)
        ranking = sorted(range(len(self.names)), key=lambda i: (-score[i], i))
        pairs, bye, repeats = pair_round(ranking, self.met, self.byes)
        if repeats:
            self.repeats += repeats
            log.warning("swiss round %d: no pairing without a repeat exists; %d pairs meet again", r + 1, repeats)
        tables = []
        for a, b in pairs:
            if self.firsts[b] < self.firsts[a]:
                a, b = b, a
            self.firsts[a] += 1
            self.firsts[b] -= 1
            self.met[a].add(b)
            self.met[b].add(a)
            tables.append((self.names[a], self.names[b]))
        if bye is not None:
            self.byes.add(bye)
        self.bye_of.append(bye)
        self.pairings.append(tables)
        return tables

    def round_tasks(self, r: int) -> list[GameTask]:
        """The games of round ``r`` (paired), in order."""
        out = []
        for t, table in enumerate(self.pairings[r]):
            group = r * self.per_round + t
            seed = group_seed(self.cfg.seed, group)
            for rotation in range(2):
                out.append(GameTask(game_key(self.cfg.name, group, rotation, seed), group, rotation, seed,
                                    rotate(table, rotation)))
        return out

    def tasks(self) -> Iterator:
        """Every game still to play, round by round; :data:`WAIT` while a round is in flight.
        Ends early if a game of the current round could not be played (run again)."""
        for r in range(self.rounds):
            self.pair(r)
            todo = [t for t in self.round_tasks(r) if t.key not in self.done]
            self.outstanding = {t.key for t in todo}
            for task in todo:
                yield task
            while self.outstanding - self.failed:
                yield WAIT
            if self.outstanding:
                return

    def standings(self) -> list[dict]:
        """Swiss score per bot over the rounds paired so far: points plus byes, best first."""
        score = self.scores(len(self.pairings))
        rows = [{"bot": n, "score": score[i], "byes": sum(1 for b in self.bye_of if b == i)}
                for i, n in enumerate(self.names)]
        rows.sort(key=lambda r: (-r["score"], self.index[r["bot"]]))
        return rows
