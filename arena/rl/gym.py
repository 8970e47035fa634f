"""Project L as a Gymnasium environment: one seat against built-in opponents.

::

    from arena.rl.gym import ProjectLGym
    env = ProjectLGym(opponents="greedy", rules="revised", players=2)
    obs, info = env.reset(seed=7)
    while True:
        action = env.action_space.sample(obs["action_mask"])
        obs, reward, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            break

The learner plays seat ``seat`` (default 0; ``"rotate"`` moves it one seat on each reset);
the other seats are played in-process by the built-in policies named in ``opponents``
(``random``, ``greedy``, ``planner``, or any bot that registered a policy; one name for
all, or a list, one per opponent seat), found through :func:`arena.plugins.policy`.
Under ``solo`` the opponent is the rules' automaton and ``players`` is 1.

Observations, masks, rewards and seeds are those of :mod:`arena.rl.aec`: ``reset(seed=s)``
deals the game ``arena play --seed s`` deals and seeds the opponents from it. An index the
mask forbids ends the episode with ``illegal_reward`` (-1) and ``info["illegal"]``.
:meth:`ProjectLGym.action_masks` serves libraries that ask for the mask by method
(sb3-contrib's MaskablePPO).
"""

from __future__ import annotations

import random

import gymnasium as gym
import numpy as np

from .aec import observation_space, render_text
from .core import Table
from .spaces import IllegalIndex


class ProjectLGym(gym.Env):
    """The single-agent environment; see the module docstring."""

    metadata = {"render_modes": ["ansi"]}

    def __init__(self, opponents="random", rules=None, players: int = 2, params: dict | None = None,
                 seat: int | str = 0, reward: str = "outcome", json_obs: bool = True, illegal_reward: float = -1.0,
                 render_mode: str | None = None):
        from arena.plugins import policy

        self.table = Table(rules, players, params, reward, json_obs)
        names = [opponents] * (players - 1) if isinstance(opponents, str) else list(opponents)
        if len(names) != players - 1:
            raise ValueError(f"{players} players need {players - 1} opponents, got {len(names)}")
        self.opponent_names = names
        self._policy = policy
        for name in names:
            policy(name)  # fail now, with the known names, on a typo
        if seat != "rotate" and not (isinstance(seat, int) and 0 <= seat < players):
            raise ValueError(f"seat must be 0-{players - 1} or 'rotate', got {seat!r}")
        self.seat_option = seat
        self.seat = 0 if seat == "rotate" else seat
        self.observation_space = observation_space(self.table)
        self.action_space = gym.spaces.Discrete(self.table.space.size)
        self.illegal_reward = float(illegal_reward)
        self.render_mode = render_mode
        self.opponents: dict[int, object] = {}
        self._opp_rng = random.Random(0)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        game_seed = int(seed) if seed is not None else int(self.np_random.integers(2**31))
        if self.seat_option == "rotate" and self.table.game is not None:
            self.seat = (self.seat + 1) % self.table.players
        self.table.deal(game_seed)
        self._opp_rng = random.Random(game_seed)
        others = [s for s in range(self.table.players) if s != self.seat]
        self.opponents = {s: self._policy(name) for s, name in zip(others, self.opponent_names)}
        self._opponents_move()
        return self.table.observe(self.seat), self._info()

    def step(self, action):
        try:
            self.table.play(action)
        except IllegalIndex as exc:
            info = self._info()
            info["illegal"] = str(exc)
            return self.table.observe(self.seat), self.illegal_reward, True, False, info
        self._opponents_move()
        game = self.table.game
        reward = self.table.rewards()[self.seat] if game.is_over else 0.0
        return self.table.observe(self.seat), reward, game.is_over, False, self._info()

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
        return self.table.chooser.mask().astype(bool)

    def render(self):
        if self.render_mode != "ansi":
            return None
        return render_text(self.table)
