"""Which games to play next: rounds of seat-rotated groups, issued as the answers require.

A :class:`Plan` feeds an executor lazily. Every rule set still *open* gets its next round
(``round`` groups of its schedule: the same groups, hence the same deals, under every rule
set); once the round's games are all back, each rule set that played is judged by the
stopping rule (:mod:`.sequential`) and either stops with a verdict or plays on. Rounds
advance in lock-step, so the decisions depend only on the games of whole rounds -- never on
which game happened to finish first -- and a run continued after kill -9 (its games come
from the store) takes exactly the decisions of a run never stopped and plays no game twice.
While a round's games are in flight the plan yields
:data:`~arena.execution.work.WAIT`, which both executors understand.
"""

from __future__ import annotations

import itertools
import math

from ..execution.work import WAIT
from ..tournament.schedule import group_count, schedule
from .sequential import StopRule, bounds, group_values, interval, verdict


class Plan:
    """The rounds of a sequential experiment or search over ``cfg.rule_sets``."""

    def __init__(self, cfg, rule: StopRule, stored: dict[str, dict]):
        self.cfg = cfg
        self.rule = rule
        self.stored = stored
        self.n = len(cfg.rule_sets)
        self.tcfgs = [cfg.tournament(i) for i in range(self.n)]
        self.cap_groups = group_count(self.tcfgs[0])
        self.seats = cfg.base.seats
        self.rows: list[list[dict]] = [[] for _ in range(self.n)]
        self.issued = [0] * self.n               # groups issued per rule set
        self.waiting: dict[str, int] = {}       # keys in flight -> rule set
        self.failed = [0] * self.n
        self.last: list[int] = []               # the rule sets of the round just played
        self.state: list[dict] = [{"state": "open", "reason": "", "interval": None} for _ in range(self.n)]
        self.search = rule.kind == "target"
        self.alpha = rule.alpha / (self.n if self.search else 1)
        ref = cfg.rule_sets[0].spec if rule.against else None
        self.bounds = [bounds(rule, rs.spec, self.seats, ref) for rs in cfg.rule_sets]
        if rule.against:
            self.state[0]["state"] = "reference"
        self.rounds = 0

    # ------------------------------------------------------------ feeding the executor
    def tasks(self):
        """Games to play, lazily; :data:`WAIT` while a round is in flight."""
        while True:
            if self.waiting:
                yield WAIT
                continue
            self._judge()
            players = self._next_players()
            if not players:
                return
            self.rounds += 1
            self.last = players
            yield from [t for i in players for t in self._issue(i)]

    def record(self, key: str, row: dict | None) -> None:
        """A game came back (``row`` None: it failed)."""
        i = self.waiting.pop(key, None)
        if i is None:
            return
        if row is None:
            self.failed[i] += 1
        else:
            self.rows[i].append(row)

    def _issue(self, i: int) -> list:
        start = self.issued[i]
        stop = min(start + self.rule.round, self.cap_groups)
        self.issued[i] = stop
        out = []
        for task in itertools.islice(schedule(self.tcfgs[i], start), (stop - start) * self.seats):
            row = self.stored.get(task.key)
            if row is not None:
                self.rows[i].append(row)
            else:
                self.waiting[task.key] = i
                out.append(task)
        return out

    # ------------------------------------------------------------ deciding
    def _open(self, i: int) -> bool:
        return self.state[i]["state"] == "open"

    def _next_players(self) -> list[int]:
        """The rule sets that play the next round."""
        open_ = [i for i in range(self.n) if self._open(i) and self.issued[i] < self.cap_groups]
        if self.search and self.rule.strategy == "bisect":
            open_ = self._midpoints()
        if self.rule.against and open_ and self.issued[0] < self.cap_groups:
            open_ = sorted(set(open_) | {0})
        return open_

    def _midpoints(self) -> list[int]:
        """The middle of every run of open candidates (in the parameter's order)."""
        out, run = [], []
        for i in list(range(self.n)) + [None]:
            if i is not None and self._open(i) and self.issued[i] < self.cap_groups:
                run.append(i)
                continue
            if run:
                started = [j for j in run if self.issued[j]]
                out.append(started[0] if started else run[(len(run) - 1) // 2])
            run = []
        return out

    def _judge(self) -> None:
        """Judge every rule set that played the round just finished."""
        played, self.last = self.last, []
        for i in played:
            if self.state[i]["state"] == "reference":
                continue
            if self.failed[i]:
                self.state[i] = {"state": "failed", "interval": self.state[i]["interval"],
                                 "reason": f"{self.failed[i]} game(s) failed; run the same command again to retry them"}
                continue
            groups = self.issued[i]
            ref = self.rows[0] if self.rule.against else None
            values = group_values(self.rule, self.rows[i], ref, groups)
            ci = interval(values, self.bounds[i], self.alpha)
            self.state[i]["interval"] = ci
            found = verdict(self.rule, ci, at_cap=groups >= self.cap_groups)
            if found is not None:
                self.state[i].update(state=found[0], reason=found[1])
        if self.search and self.rule.monotone:
            self._prune()

    def _prune(self) -> None:
        """A candidate above (below) the target rules out every value beyond it when the
        figure is monotone in the parameter."""
        rising = self.rule.monotone == "increasing"
        for i in range(self.n):
            side = self.state[i]["state"]
            if side not in ("above", "below"):
                continue
            beyond = range(i + 1, self.n) if (side == "above") == rising else range(i)
            for j in beyond:
                if self._open(j):
                    self.state[j] = {"state": f"{side} (monotone)", "interval": self.state[j]["interval"],
                                     "reason": f"{self.cfg.rule_sets[i].name} is {side} the target and the figure is "
                                               f"{self.rule.monotone} in the parameter"}

    # ------------------------------------------------------------ the outcome
    def outcome(self) -> dict:
        """Per rule set: the verdict, its reason, the interval and the games played."""
        out = {}
        for i, rs in enumerate(self.cfg.rule_sets):
            st = self.state[i]
            ci = st["interval"]
            out[rs.name] = {"state": st["state"], "reason": st["reason"], "games": len(self.rows[i]),
                            "groups": self.issued[i], "interval": ci and {k: (None if v is None or (
                                isinstance(v, float) and not math.isfinite(v)) else v) for k, v in ci.items()}}
        return {"rule": self.rule.to_json(), "alpha": self.alpha, "rounds": self.rounds, "cap_games": self.cap_groups
                * self.seats, "rule_sets": out}
