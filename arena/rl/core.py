"""What the PettingZoo and Gymnasium environments share, without either library.

:class:`Table` holds one game, its :class:`~arena.rl.spaces.Chooser` and
:class:`~arena.rl.observe.Observer`: it deals from a seed, takes indices, applies
complete moves, plays the moves that need no choice, and gives each seat its observation
(``{"observation": array, "action_mask": mask}``) and its final reward.
"""

from __future__ import annotations

import numpy as np

from engine import OVER, Game, RuleSpec, compile_rules, observation
from engine.actions import ACTION
from engine.errors import ParameterError

from .observe import observer
from .spaces import Chooser, action_index

#: reward schemes of the environments
REWARDS = ("outcome", "score", "margin")


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
                 json_obs: bool = True):
        self.spec = rule_spec(rules, params)
        if reward not in REWARDS:
            raise ParameterError(f"reward must be one of {', '.join(REWARDS)}, got {reward!r}")
        self.rules = compile_rules(self.spec, players)
        self.players = players
        self.reward_kind = reward
        self.json_obs = json_obs
        self.space = action_index(self.rules)
        self.observer = observer(self.rules)
        self.game: Game | None = None
        self.chooser: Chooser | None = None
        self.memo: dict = {}  # each seat's last observation array (see Observer.encode)

    def deal(self, seed: int) -> None:
        """A new game from ``seed`` (the same deal as ``arena play --seed``)."""
        self.game = Game.new(self.rules, self.players, seed)
        self.memo = {}
        self.chooser = Chooser(self.game, self.space)
        self.settle()

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

        Raises :class:`~arena.rl.spaces.IllegalIndex` for an index the mask forbids."""
        move = self.chooser.play(index)
        if move is None:
            return False
        game = self.game
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
        if game.seat == seat and game.phase != OVER:
            return {"observation": self.observer._encode_delta(game, seat, self.chooser, self.memo),
                    "action_mask": self.chooser.mask()}
        return {"observation": self.observer._encode_delta(game, seat, None, self.memo),
                "action_mask": np.zeros(self.space.size, dtype=np.int8)}

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
