"""What the PettingZoo and Gymnasium environments share, without either library.

:class:`Table` holds one game, its :class:`~arena.rl.spaces.Chooser` and
:class:`~arena.rl.observe.Observer`: it deals from a seed, takes indices, applies
complete moves, plays the moves that need no choice, and gives each seat its observation
(``{"observation": array, "action_mask": mask}``), its final reward and, when asked,
its shaped reward (the change of a potential; see :meth:`Table.potential`).

It also refuses what no environment should take: an action that is not an integer
(:class:`NotAnIndex`: ``2.0``, ``"3"``, ``True``) and a step once the game is over
(:class:`EpisodeOver`).
"""

from __future__ import annotations

import numbers

import numpy as np

from engine import OVER, Game, RuleSpec, compile_rules, observation
from engine.actions import ACTION
from engine.errors import ParameterError

from .observe import observer
from .spaces import Chooser, action_index

#: reward schemes of the environments
REWARDS = ("outcome", "score", "margin")
#: potentials that shaped rewards follow (``shaping=``): ``None`` is off
SHAPINGS = (None, "score", "progress", "margin")
#: observation layouts (``obs=``): the rule set's own, or one for every rule set
OBSERVATIONS = ("native", "universal")


_INT64 = np.int64


class NotAnIndex(TypeError):
    """An action that is not an integer index (a float, a string, a bool, an array)."""


class EpisodeOver(RuntimeError):
    """A step after the end of the episode (or before the first reset)."""


def check_index(index) -> int:
    """``index`` as an int, or :class:`NotAnIndex` when it is not an integer: Python and
    numpy integers (and 0-d integer arrays) pass, ``2.0``, ``"2"`` and ``True`` do not."""
    if type(index) is int:
        return index
    if type(index) is np.int64:  # what numpy's samplers give: no ABC check
        return int(index)
    if isinstance(index, np.ndarray) and index.ndim == 0 and index.dtype.kind in "iu":
        return int(index)
    if isinstance(index, numbers.Integral) and not isinstance(index, (bool, np.bool_)):
        return int(index)
    raise NotAnIndex(f"an action is an integer index, got {index!r} ({type(index).__name__})")


def rule_spec(rules=None, params: dict | None = None) -> RuleSpec:
    """A :class:`RuleSpec` from ``"revised,ghost"``, a list of variant names or a spec."""
    if isinstance(rules, RuleSpec):
        if params:
            return RuleSpec.make(rules.variants, {**rules.param_dict, **params})
        return rules
    if rules is None:
        variants: list[str] = []
    elif isinstance(rules, str):
        variants = [v.strip() for v in rules.split(",") if v.strip()]
    else:
        variants = list(rules)
    return RuleSpec.make(variants, params or {})


class Table:
    """One game seen through the action index: seeds, indices, observations, rewards."""

    def __init__(self, rules=None, players: int = 2, params: dict | None = None, reward: str = "outcome",
                 json_obs: bool = True, shaping: str | None = None, shaping_scale: float = 0.1,
                 obs: str = "native"):
        self.spec = rule_spec(rules, params)
        if reward not in REWARDS:
            raise ParameterError(f"reward must be one of {', '.join(REWARDS)}, got {reward!r}")
        if shaping not in SHAPINGS:
            raise ParameterError(f"shaping must be score, progress, margin or None, got {shaping!r}")
        self.shaping = shaping
        self.shaping_scale = float(shaping_scale)
        self.rules = compile_rules(self.spec, players)
        self.players = players
        self.reward_kind = reward
        self.json_obs = json_obs
        self.space = action_index(self.rules)
        self.observer = observer(self.rules)
        if obs not in OBSERVATIONS:
            raise ParameterError(f"obs must be native or universal, got {obs!r}")
        #: the universal maps (:mod:`arena.rl.universal`), or None for the native arrays
        self.universal = None
        if obs == "universal":
            from .universal import universal
            self.universal = universal(self.rules)
        self.action_size = self.universal.act_size if self.universal else self.space.size
        self.obs_low = self.universal.low if self.universal else self.observer.low
        self.obs_high = self.universal.high if self.universal else self.observer.high
        self.game: Game | None = None
        self.chooser: Chooser | None = None
        self.memo: dict = {}  # each seat's last observation array (see Observer.encode)

    def deal(self, seed: int) -> None:
        """A new game from ``seed`` (the same deal as ``arena play --seed``)."""
        self.game = Game.new(self.rules, self.players, seed)
        self.memo = {}
        self.chooser = Chooser(self.game, self.space)
        self.settle()

    def snapshot(self) -> tuple:
        """The state of the game and of the sequence under way, as a value :meth:`restore`
        takes (any number of times): for tree search and afterstates."""
        return (self.game.clone(), self.chooser.clone(None)) if self.game is not None else (None, None)

    def restore(self, snap: tuple) -> None:
        """Go back to a :meth:`snapshot` (the observation arrays are rebuilt from it)."""
        game, chooser = snap
        if game is None:
            self.game = self.chooser = None
        else:
            self.game = game.clone()
            self.chooser = chooser.clone(self.game)
        self.memo = {}

    def settle(self) -> None:
        """Apply the moves that need no choice (see :meth:`Chooser.forced`)."""
        game, chooser = self.game, self.chooser
        while not game.is_over and (chooser.mode or game.phase):  # an ordinary action is never forced
            move = chooser.forced()
            if move is None:
                return
            game.apply(move)
            chooser.reset()

    def play(self, index) -> bool:
        """Take ``index`` for the seat to move; True when it completed a move (applied).

        Raises :class:`~arena.rl.spaces.IllegalIndex` for an index the mask forbids,
        :class:`NotAnIndex` for a float or anything else not an integer and
        :class:`EpisodeOver` once the game is over."""
        game = self.game
        if game is None or game.phase == OVER:
            raise EpisodeOver("the episode is over: call reset() before stepping again" if game is not None
                              else "no episode yet: call reset() first")
        if type(index) is not int:
            index = int(index) if type(index) is _INT64 else check_index(index)  # np.int64: what samplers give
        if self.universal is not None:
            index = self.universal.native_index(index)
        move = self.chooser.play(index)
        if move is None:
            return False
        game.apply(move)
        self.chooser.reset()
        if game.phase != ACTION:  # a decision or the end may follow (an action is never forced)
            self.settle()
        return True

    def apply(self, move) -> None:
        """Apply a whole engine move for the seat to move (an opponent's policy)."""
        self.game.apply(move)
        self.chooser.reset()
        self.settle()

    def observe(self, seat: int) -> dict:
        """``{"observation": float32 array, "action_mask": int8 array}`` for ``seat``
        (the mask is all zeros when the seat is not to move)."""
        game = self.game
        u = self.universal
        if u is not None:  # mapped from the native arrays, read where they are (no copies)
            if game.seat == seat and game.phase != OVER:
                return {"observation": u.observation(self.observer._encode_delta(game, seat, self.chooser, self.memo,
                                                                                 fresh=False)),
                        "action_mask": u.mask(self.chooser.mask_view())}
            return {"observation": u.observation(self.observer._encode_delta(game, seat, None, self.memo, fresh=False)),
                    "action_mask": np.zeros(u.act_size, dtype=np.int8)}
        if game.seat == seat and game.phase != OVER:
            return {"observation": self.observer._encode_delta(game, seat, self.chooser, self.memo),
                    "action_mask": self.chooser.mask()}
        return {"observation": self.observer._encode_delta(game, seat, None, self.memo),
                "action_mask": np.zeros(self.space.size, dtype=np.int8)}

    def mask(self) -> np.ndarray:
        """The mask of the seat to move (in the table's action index)."""
        m = self.chooser.mask()
        return self.universal.mask(m) if self.universal is not None else m

    def info(self, seat: int) -> dict:
        """The seat's info: the JSON observation when ``json_obs`` is on."""
        return {"observation": observation(self.game, seat)} if self.json_obs else {}

    def rewards(self) -> list[float]:
        """Each seat's final reward: ``outcome`` (seats beaten minus seats beating it,
        over the others; solo: +1 won, -1 lost), ``score`` (its final score), or
        ``margin`` (its score minus the best other score; solo: minus the automaton's)."""
        res = self.game.result()
        n = self.players
        kind = self.reward_kind
        if "won" in res:  # solo against the automaton
            if kind == "outcome":
                return [1.0 if res["won"] else -1.0]
            return [float(res["margin"] if kind == "margin" else res["scores"][0])]
        scores = res["scores"]
        if kind == "score":
            return [float(s) for s in scores]
        if kind == "margin":
            return [float(scores[s] - max(x for t, x in enumerate(scores) if t != s)) for s in range(n)]
        rank = res["ranking"]
        return [(sum(r > rank[s] for r in rank) - sum(r < rank[s] for r in rank)) / max(n - 1, 1) for s in range(n)]

    def potential(self, seat: int) -> float:
        """The potential that shaped rewards follow, before ``shaping_scale``:
        ``"score"`` the seat's score now (R7.1, finishing-touch costs included once paid);
        ``"progress"`` its score plus, while the game goes on, each unfinished puzzle's
        points times the share of its recess already covered (so every placement moves
        it; at the end it is the score); ``"margin"`` its score minus the best other
        seat's (solo: minus the automaton's). All are 0 at the deal, so a seat's shaped
        rewards over a whole game sum to ``shaping_scale`` times the potential at the end:
        the final score (``score``, ``progress``) or margin."""
        game = self.game
        own = game.score(seat)
        if self.shaping == "score":
            return float(own)
        if self.shaping == "progress":
            if game.is_over:
                return float(own)
            rules = game.rules
            recess, points = rules.recess, rules.points
            return own + sum(points[pz.card] * pz.filled.bit_count() / recess[pz.card].bit_count()
                             for pz in game.players[seat].unfinished)
        if game.n > 1:
            return float(own - max(game.score(s) for s in range(game.n) if s != seat))
        auto = game.extra.get("automaton_pile")
        return float(own - (sum(game.rules.points[c] for c in auto) if auto else 0))

    def potentials(self) -> list[float]:
        """Every seat's :meth:`potential` (all 0 when shaping is off)."""
        if self.shaping is None:
            return [0.0] * self.players
        return [self.potential(s) for s in range(self.players)]
