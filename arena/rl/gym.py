"""Project L as a Gymnasium environment: one seat against in-process opponents.

::

    import gymnasium as gym
    env = gym.make("arena.rl.gym:ProjectL-v0", opponents="greedy", seat="rotate")
    # or: from arena.rl.gym import ProjectLGym; env = ProjectLGym(opponents="greedy")
    obs, info = env.reset(seed=7)
    while True:
        action = env.action_space.sample(obs["action_mask"])
        obs, reward, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            break

Registered ids (importing :mod:`arena.rl.gym` registers them; the ``arena.rl.gym:``
prefix makes :func:`gymnasium.make` import it), each taking every keyword below:

=========================  ==========================================================
``ProjectL-v0``            base rules, 2 seats, against ``random``
``ProjectLRevised-v0``     revised rules, 2 seats
``ProjectLGhost-v0``       revised and ghost, 2 seats
``ProjectLSolo-v0``        solo against the automaton (1 seat, no opponents)
``ProjectLUniversal-v0``   base rules with the universal observation and action index
=========================  ==========================================================

The learner plays seat ``seat`` (default 0; ``"rotate"``: seat ``seed % players`` on a
seeded reset, the next seat on an unseeded one, so a seed fixes the episode). The other
seats are played in-process by ``opponents``: one for all or a list, one per opponent
seat, each a built-in bot name (``random``, ``greedy``, ``planner-fast``...), a saved
snapshot (``"module:factory path"``), an ``obs, mask -> index`` function, a policy object
(``choose(game, rng)``) or an :class:`~arena.rl.selfplay.OpponentPool` drawn from at every
reset (self-play; see :mod:`arena.rl.selfplay`). :meth:`ProjectLGym.set_opponents`
changes them between episodes. Under ``solo`` the opponent is the rules' automaton and
``players`` is 1.

Observations, masks, rewards and seeds are those of :mod:`arena.rl.aec`: ``reset(seed=s)``
deals the game ``arena play --seed s`` deals and seeds the opponents from it.
``obs="universal"`` gives the one shape and action index of every rule set and seat count
(:mod:`arena.rl.universal`). ``shaping="score"``, ``"progress"`` or ``"margin"`` adds, at each step,
``shaping_scale`` times the change of that potential (:meth:`arena.rl.core.Table.potential`)
since the previous step, opponents' moves included; over a game these sum to
``shaping_scale`` times the final potential, on top of the end reward.

An index the mask forbids ends the episode with ``illegal_reward`` (-1) and
``info["illegal"]`` (``illegal="raise"`` raises :class:`~arena.rl.spaces.IllegalIndex`
instead); an action that is not an integer raises :class:`~arena.rl.core.NotAnIndex`, a
step after the end (or before the first reset) :class:`~arena.rl.core.EpisodeOver`.

``info["result"]`` is there exactly when the game has ended (``terminated``): the
engine's result (``scores``, ``ranking``, ``completed``, ``rounds``, ``adjudicated``;
solo: ``won`` and ``margin``). Every registered id has ``max_episode_steps`` =
:data:`MAX_EPISODE_STEPS` (Gymnasium's ``TimeLimit``; ``gym.make(..., max_episode_steps=N)``
changes it); ``max_steps=N`` makes the environment itself cut episodes after ``N`` steps
and say so. A cut episode has ``truncated`` True, no end reward in its last reward (the
game has no outcome; only the shaping, if on) and no ``info["result"]``, so it never
reads as a tie; a cut by ``max_steps`` also has ``info["truncated"]`` (why) and
``info["scores"]`` (the scores at the cut). :meth:`ProjectLGym.action_masks` (booleans) serves
libraries that ask for the mask by method (sb3-contrib's MaskablePPO), and
:meth:`ProjectLGym.legal_actions` lists the legal indices.
"""

from __future__ import annotations

import random

import gymnasium as gym
import numpy as np

from .aec import MaskedDiscrete, observation_space, render_text
from .core import EpisodeOver, Table
from .selfplay import Opponents
from .spaces import IllegalIndex


class ProjectLGym(gym.Env):
    """The single-agent environment; see the module docstring."""

    metadata = {"render_modes": ["ansi"]}

    def __init__(self, opponents="random", rules=None, players: int = 2, params: dict | None = None,
                 seat: int | str = 0, reward: str = "outcome", json_obs: bool = True, illegal_reward: float = -1.0,
                 render_mode: str | None = None, shaping: str | None = None, shaping_scale: float = 0.1,
                 obs: str = "native", illegal: str = "terminate", max_steps: int | None = None):
        if illegal not in ("terminate", "raise"):
            raise ValueError(f"illegal must be terminate or raise, got {illegal!r}")
        if max_steps is not None and int(max_steps) < 1:
            raise ValueError(f"max_steps must be a positive number of steps, got {max_steps!r}")
        self.table = Table(rules, players, params, reward, json_obs, shaping, shaping_scale, obs)
        self._opponents = Opponents(opponents, players - 1)
        if seat != "rotate" and not (isinstance(seat, int) and 0 <= seat < players):
            raise ValueError(f"seat must be 0-{players - 1} or 'rotate', got {seat!r}")
        self.seat_option = seat
        self.seat = 0 if seat == "rotate" else seat
        self.observation_space = observation_space(self.table)
        self.action_space = MaskedDiscrete(self.table.action_size)
        self.illegal_reward = float(illegal_reward)
        self.illegal = illegal
        self.max_steps = None if max_steps is None else int(max_steps)
        self.steps = 0
        self._done = True  # no episode yet
        self.render_mode = render_mode
        self.opponents: dict[int, object] = {}
        self.opponent_names: dict[int, str] = {}
        self._opp_rng = random.Random(0)
        self._phi = 0.0

    def set_opponents(self, opponents) -> None:
        """Play the next episodes against ``opponents`` (anything the constructor takes)."""
        self._opponents = Opponents(opponents, self.table.players - 1)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        game_seed = int(seed) if seed is not None else int(self.np_random.integers(2**31))
        if self.seat_option == "rotate":
            if seed is not None:
                self.seat = game_seed % self.table.players
            elif self.table.game is not None:
                self.seat = (self.seat + 1) % self.table.players
        self.table.deal(game_seed)
        self._opp_rng = random.Random(game_seed)
        others = [s for s in range(self.table.players) if s != self.seat]
        drawn = self._opponents.draw(random.Random(int(self.np_random.integers(2**31))))
        self.opponents = {s: opp for s, (_, opp) in zip(others, drawn)}
        self.opponent_names = {s: name for s, (name, _) in zip(others, drawn)}
        self._phi = self.table.potential(self.seat) if self.table.shaping else 0.0
        self.steps = 0
        self._done = False
        self._opponents_move()
        self._done = self.table.game.is_over
        return self.table.observe(self.seat), self._info()

    def step(self, action):
        table = self.table
        if self._done:
            raise EpisodeOver("no episode yet: call reset() first" if table.game is None
                              else "the episode is over: call reset() before stepping again")
        self.steps += 1
        try:
            table.play(action)
        except IllegalIndex as exc:
            if self.illegal == "raise":
                raise
            self._done = True
            info = self._info()
            info["illegal"] = str(exc)
            return table.observe(self.seat), self.illegal_reward, True, False, info
        self._opponents_move()
        game = table.game
        reward = table.rewards()[self.seat] if game.is_over else 0.0
        if table.shaping:
            phi = table.potential(self.seat)
            reward += table.shaping_scale * (phi - self._phi)
            self._phi = phi
        limit = self.max_steps
        truncated = not game.is_over and limit is not None and self.steps >= limit
        self._done = game.is_over or truncated
        info = self._info()
        if truncated:
            info["truncated"] = f"step limit {limit}: the game was not over, so there is no outcome"
            info["scores"] = game.scores()
        return table.observe(self.seat), reward, game.is_over, truncated, info

    def clone(self) -> dict:
        """The environment's whole state (game, sequence under way, seat, opponents and
        their random stream, step count, shaping) as a value :meth:`restore` takes any
        number of times: search a tree of steps (opponents' replies included) and come
        back. The opponents themselves are shared, not copied."""
        import copy
        return {"table": self.table.snapshot(), "seat": self.seat, "opponents": dict(self.opponents),
                "names": dict(self.opponent_names), "opp_rng": self._opp_rng.getstate(), "phi": self._phi,
                "steps": self.steps, "done": self._done,
                "np_random": copy.deepcopy(self.np_random.bit_generator.state)}

    def restore(self, state: dict) -> None:
        """Go back to a state :meth:`clone` returned."""
        import copy
        self.table.restore(state["table"])
        self.seat = state["seat"]
        self.opponents = dict(state["opponents"])
        self.opponent_names = dict(state["names"])
        self._opp_rng.setstate(state["opp_rng"])
        self._phi, self.steps, self._done = state["phi"], state["steps"], state["done"]
        self.np_random.bit_generator.state = copy.deepcopy(state["np_random"])

    def observe(self) -> dict:
        """The learner's observation now (what the last ``reset`` or ``step`` returned)."""
        return self.table.observe(self.seat)

    def _opponents_move(self) -> None:
        game = self.table.game
        while not game.is_over and game.to_move() != self.seat:
            bot = self.opponents[game.to_move()]
            self.table.apply(bot.choose(game, self._opp_rng))

    def _info(self) -> dict:
        info = self.table.info(self.seat)
        if self.table.game.is_over:
            info["result"] = self.table.game.result()
        return info

    def action_masks(self) -> np.ndarray:
        """The current mask as booleans (for MaskablePPO and the like)."""
        return self.table.mask().astype(bool)

    def legal_actions(self) -> list[int]:
        """The legal indices now, ascending (empty once the game is over)."""
        if self.table.game is None or self.table.game.is_over:
            return []
        return self.table.mask().view(np.bool_).nonzero()[0].tolist()

    def render(self):
        if self.render_mode != "ansi":
            return None
        return render_text(self.table)


#: steps after which a registered id's episode is truncated (``max_episode_steps``): far
#: beyond a whole game (a learner that only passes plays 300 actions before the rules'
#: 100-round limit, R5.3), so it stops only a policy stuck in compound sequences
MAX_EPISODE_STEPS = 1000

#: the registered ids and their defaults (every keyword of ProjectLGym may override them)
IDS = {
    "ProjectL-v0": {},
    "ProjectLRevised-v0": {"rules": "revised"},
    "ProjectLGhost-v0": {"rules": "revised,ghost"},
    "ProjectLSolo-v0": {"rules": "solo", "players": 1, "opponents": []},
    "ProjectLUniversal-v0": {"obs": "universal"},
}


def register() -> None:
    """Register :data:`IDS` with Gymnasium (done on import; again is harmless)."""
    for env_id, kwargs in IDS.items():
        if env_id not in gym.registry:
            gym.register(env_id, entry_point="arena.rl.gym:ProjectLGym", kwargs=dict(kwargs),
                         max_episode_steps=MAX_EPISODE_STEPS)


register()
