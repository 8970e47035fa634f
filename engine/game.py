"""The game state and its flow: turns, rounds, completions, end, finishing touches, scores.

:class:`Game` is mutable and deterministic, in the manner of OpenSpiel's ``State``:
``legal_actions()`` lists what the player to move may do, ``apply(action)`` validates and
performs one action or decision (raising :class:`~engine.errors.IllegalAction` and
leaving the state untouched when it breaks a rule), ``clone()`` copies cheaply for search.
What each action *does* lives in the ruleset's handlers (:mod:`engine.base_rules` and the
variants); this module owns the flow between actions, which is the same in every rule set.
"""

from __future__ import annotations

import random
from typing import Any, Iterable

from .actions import ACTION, BLACK, FINISH, OVER, PHASE_NAMES, well_typed
from .belongings import PlayerState, PuzzleInPlay  # noqa: F401  (PuzzleInPlay: variants and tests import it from here)
from .errors import DealError, IllegalAction
from .rules import RuleSpec, Ruleset, compile_rules
from .state_json import game_from_json, game_to_json


class Game:
    """One game of Project L under a compiled :class:`~engine.rules.Ruleset`.

    Create one with :meth:`Game.new`. Attributes are the state; treat them as read-only
    outside the engine and change the game only through :meth:`apply`.
    """

    __slots__ = ("rules", "n", "seed", "players", "reserve", "decks", "rows", "seat", "actions_left",
                 "master_used", "round", "end_triggered", "final_round", "phase", "adjudicated",
                 "pending", "decision", "finishes", "history", "extra")

    def __init__(self, rules: Ruleset, seed: int | None):
        self.rules = rules
        self.n = rules.players
        self.seed = seed
        self.players = [PlayerState(len(rules.shapes)) for _ in range(self.n)]
        self.reserve = [0] * len(rules.shapes)
        self.decks: list[list[int]] = [[], []]
        self.rows: list[list[int]] = [[-1] * rules.row_size, [-1] * rules.row_size]
        self.seat = 0
        self.actions_left = rules.actions_per_turn
        self.master_used = False
        self.round = 1
        self.end_triggered = False
        self.final_round = 0
        self.phase = ACTION
        self.adjudicated = False
        self.pending: list[int] = []
        self.decision: dict[str, Any] | None = None
        self.finishes: dict[int, tuple] = {}
        self.history: list[tuple[int, Any]] = []
        self.extra: dict[str, Any] = {}

    # ------------------------------------------------------------------ creation
    @classmethod
    def new(cls, rules: RuleSpec | Ruleset | None = None, players: int = 2, seed: int = 0,
            deal: dict | None = None) -> "Game":
        """A new game: rules (spec or compiled), number of players, seed, optional deal.

        ``deal`` is ``{"white": [ids...], "black": [ids...]}``: both decks' orders, top
        first, overriding the shuffle (R1.5); see :func:`engine.deal.check_deal`.
        """
        if not isinstance(rules, Ruleset):
            rules = compile_rules(rules or RuleSpec(), players)
        elif rules.players != players:
            raise DealError(f"the ruleset was compiled for {rules.players} players, not {players}")
        game = cls(rules, seed)
        rng = random.Random(seed)
        rules.setup(game, rng, deal)
        for hook in rules.setup_hooks:
            hook(game, rng)
        return game

    def clone(self) -> "Game":
        """A deep-enough copy for search: mutating the clone never touches ``self``."""
        c = Game.__new__(Game)
        c.rules = self.rules
        c.n = self.n
        c.seed = self.seed
        c.players = [p.copy() for p in self.players]
        c.reserve = self.reserve[:]
        c.decks = [d[:] for d in self.decks]
        c.rows = [r[:] for r in self.rows]
        c.seat = self.seat
        c.actions_left = self.actions_left
        c.master_used = self.master_used
        c.round = self.round
        c.end_triggered = self.end_triggered
        c.final_round = self.final_round
        c.phase = self.phase
        c.adjudicated = self.adjudicated
        c.pending = self.pending[:]
        c.decision = dict(self.decision) if self.decision is not None else None
        c.finishes = dict(self.finishes)
        c.history = self.history[:]
        c.extra = {k: (v[:] if isinstance(v, list) else v) for k, v in self.extra.items()}
        return c

    # ------------------------------------------------------------------ queries
    @property
    def is_over(self) -> bool:
        """True once the finishing touches are done and scores are final."""
        return self.phase == OVER

    @property
    def phase_name(self) -> str:
        """``action``, ``reward``, ``level_up``, ``finish`` or ``over``."""
        return PHASE_NAMES[self.phase]

    def to_move(self) -> int:
        """The seat that must act or decide now (-1 when the game is over)."""
        return -1 if self.phase == OVER else self.seat

    def legal_actions(self) -> list:
        """Every legal single action (or decision option) of the player to move.

        In the action phase: takes, take_piece, upgrades/exchanges, every distinct
        placement, variant actions and pass. Master combinations are not listed (they can
        be many): see :meth:`master_actions`; a master action is validated when given.
        In the finishing touches the list holds only the empty :class:`Finish`; see
        :meth:`finish_actions` for the lazy enumerator.
        """
        return self.rules.enumerate(self)

    def master_actions(self) -> Iterable:
        """Lazily enumerate legal master actions (R3.6) of the player to move."""
        return self.rules.enumerate_master(self)

    def finish_actions(self) -> Iterable:
        """Lazily enumerate finishing-touch decisions (R6) of the player to move."""
        return self.rules.enumerate_finish(self)

    # ------------------------------------------------------------------ playing
    def apply(self, action) -> None:
        """Validate and perform ``action`` for the player to move.

        Raises :class:`IllegalAction` (with the rule number) and leaves the state
        untouched if the action breaks a rule.
        """
        entry = self.rules.handlers.get(type(action))
        if entry is None:
            raise IllegalAction("R14", f"{type(action).__name__} is not an action of rules {self.rules.spec.label()}")
        phase, handler = entry
        if phase != self.phase:
            if self.phase == OVER:
                raise IllegalAction("R6", "the game is over")
            if self.phase == FINISH:
                raise IllegalAction("R6.3", "only the finishing touches are possible now")
            raise IllegalAction("R14", f"the game is waiting for a {PHASE_NAMES[self.phase]} decision, not a {PHASE_NAMES[phase]}")
        seat = self.seat
        try:
            handler(self, action)
        except (TypeError, IndexError) as exc:
            # Handlers validate before they mutate, so a compact action whose fields have
            # the wrong types fails here with the state untouched. With well-typed fields
            # the error is the engine's own and must surface.
            if well_typed(action):
                raise
            raise IllegalAction("R14", f"malformed {type(action).__name__}: {exc}") from None
        self.history.append((seat, action))

    def forfeit(self, seat: int) -> None:
        """The arena forfeits ``seat``: it passes for the rest of the game and ranks last (R7.3)."""
        if not 0 <= seat < self.n or self.players[seat].forfeited:
            return
        self.players[seat].forfeited = True
        self.history.append((seat, None))
        if self.phase == OVER:
            return
        if self.seat == seat:
            if self.phase == FINISH:
                self._next_finisher()
            else:
                self.pending.clear()
                self.decision = None
                self.phase = ACTION
                self._end_turn()

    # ------------------------------------------------------------------ flow (for handlers)
    def draw(self, color: int) -> int:
        """Top card of the ``color`` deck, or -1 if empty; emptying the black deck triggers the end (R5.1)."""
        deck = self.decks[color]
        if not deck:
            return -1
        card = deck.pop(0)
        if color == BLACK and not deck:
            self.trigger_end()
        return card

    def trigger_end(self) -> None:
        """R5.1/R5.2: finish this round, then play one more."""
        if not self.end_triggered:
            self.end_triggered = True
            self.final_round = self.round + 1

    def action_done(self, completions: bool = False) -> None:
        """Called by action handlers after mutating: count the action, settle completions."""
        self.actions_left -= 1
        if completions:
            p = self.players[self.seat]
            recess = self.rules.recess
            self.pending = [pz.card for pz in p.unfinished if pz.filled == recess[pz.card]]
            if self.pending and not self.settle():
                return
        if self.actions_left <= 0:
            self._end_turn()

    def decision_done(self) -> None:
        """Called by decision handlers: resume settling completions, then the turn."""
        self.phase = ACTION
        self.decision = None
        if self.settle() and self.actions_left <= 0:
            self._end_turn()

    def settle(self) -> bool:
        """R4.1: resolve pending completions in the order taken; False if a decision is open."""
        p = self.players[self.seat]
        rules = self.rules
        shape_of = rules.geometry.placement_shape
        while self.pending:
            card = self.pending.pop(0)
            for i, pz in enumerate(p.unfinished):
                if pz.card == card:
                    del p.unfinished[i]
                    break
            supply = p.supply
            for pid in pz.placed:
                supply[shape_of[pid]] += 1
            p.completed.append(card)
            if not rules.reward(self, p, card):
                return False
        return True

    def _end_turn(self) -> None:
        for hook in self.rules.turn_end_hooks:
            hook(self)
            if self.phase != ACTION:
                return
        players = self.players
        if all(p.forfeited for p in players):
            self.start_finish()
            return
        while True:
            self.seat += 1
            if self.seat == self.n:
                self.seat = 0
                if self._round_over():
                    return
                self.round += 1
            if not players[self.seat].forfeited:
                break
        self.actions_left = self.rules.actions_per_turn
        self.master_used = False

    def _round_over(self) -> bool:
        rules = self.rules
        if rules.end_check is not None:
            return rules.end_check(self)
        if self.end_triggered:
            if self.round >= self.final_round:
                self.start_finish()
                return True
        elif self.round >= rules.max_rounds:
            self.adjudicated = True
            self.start_finish()
            return True
        return False

    def start_finish(self) -> None:
        """R6: the last round is over; ask each seat in order for its finishing touches."""
        self.phase = FINISH
        self.pending.clear()
        self.decision = None
        self.seat = -1
        self._next_finisher()

    def _next_finisher(self) -> None:
        while True:
            self.seat += 1
            if self.seat >= self.n:
                self._end_game()
                return
            if not self.players[self.seat].forfeited:
                return

    def record_finish(self, placements: tuple) -> None:
        """Store a seat's validated finishing touches; all are applied together at the end
        (R6.1: no one sees another's choice)."""
        self.finishes[self.seat] = placements
        self._next_finisher()

    def _end_game(self) -> None:
        rules = self.rules
        recess = rules.recess
        shape_of = rules.geometry.placement_shape
        mask_of = rules.geometry.placement_mask
        for seat, placements in sorted(self.finishes.items()):
            p = self.players[seat]
            for place in placements:
                for pz in p.unfinished:
                    if pz.card == place.puzzle:
                        pz.filled |= mask_of[place.placement]
                        pz.placed.append(place.placement)
                        p.supply[shape_of[place.placement]] -= 1
                        break
            p.finish_pieces += len(placements)
            keep = []
            for pz in p.unfinished:
                if pz.filled == recess[pz.card]:
                    p.completed.append(pz.card)
                    p.locked += len(pz.placed)
                else:
                    keep.append(pz)
            p.unfinished = keep
        self.finishes = {}
        self.phase = OVER
        self.seat = -1

    # ------------------------------------------------------------------ results
    def score(self, seat: int) -> int:
        """R7.1: completed points − finishing-touch pieces × cost − rule-set penalties."""
        rules = self.rules
        p = self.players[seat]
        s = sum(map(rules.points.__getitem__, p.completed)) - p.finish_pieces * rules.finishing_touch_cost
        for penalty in rules.score_penalties:
            s -= penalty(self, seat)
        return s

    def scores(self) -> list[int]:
        """Every seat's score (final once the game is over)."""
        return [self.score(s) for s in range(self.n)]

    def ranking(self) -> list[int]:
        """R7.2/R7.3: each seat's place, 1 = best; equal keys share a place (1, 1, 3)."""
        keys = []
        for s, p in enumerate(self.players):
            keys.append((not p.forfeited, self.score(s), len(p.completed), p.pieces_owned(self.rules)))
        if self.rules.rank_key is not None:
            keys = [self.rules.rank_key(self, s, k) for s, k in enumerate(keys)]
        return [1 + sum(1 for other in keys if other > k) for k in keys]

    def result(self) -> dict:
        """The result as plain data: scores, ranking, rounds, adjudicated, forfeits."""
        result = {
            "scores": self.scores(),
            "ranking": self.ranking(),
            "completed": [len(p.completed) for p in self.players],
            "rounds": self.round,
            "adjudicated": self.adjudicated,
            "forfeited": [p.forfeited for p in self.players],
        }
        for hook in self.rules.result_hooks:
            hook(self, result)
        return result

    # ------------------------------------------------------------------ serialisation
    def to_json(self) -> dict:
        """The whole state as JSON-able data (see :mod:`engine.state_json`)."""
        return game_to_json(self)

    @classmethod
    def from_json(cls, obj: dict) -> "Game":
        """Inverse of :meth:`to_json`."""
        return game_from_json(obj, cls)

    def __eq__(self, other) -> bool:
        return isinstance(other, Game) and self.to_json() == other.to_json()

    __hash__ = None  # mutable

    def __repr__(self) -> str:
        return (f"<Game {self.rules.spec.label()} players={self.n} seed={self.seed} round={self.round} "
                f"phase={self.phase_name} seat={self.seat}>")
