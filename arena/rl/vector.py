"""Many Gymnasium environments stepped together in one process (a Gymnasium ``VectorEnv``).

::

    from arena.rl.vector import ProjectLVectorEnv
    envs = ProjectLVectorEnv(8, opponents="greedy", rules="revised", seat="rotate")
    obs, infos = envs.reset(seed=0)                 # env i deals seed 0 + i
    masks = obs["action_mask"]                      # (8, actions) int8; envs.action_masks() as booleans
    actions = [np.random.choice(np.flatnonzero(m)) for m in masks]
    obs, rewards, terminated, truncated, infos = envs.step(actions)

Each of ``num_envs`` :class:`~arena.rl.gym.ProjectLGym` (every keyword of it is taken,
the same for all; ``json_obs`` is off unless asked) is stepped in turn in this process,
and the observations are written into one preallocated batch (``obs["observation"]``
of shape ``(num_envs, size)``, ``obs["action_mask"]`` ``(num_envs, actions)``). An
environment whose episode ends is reset in the same step (Gymnasium's ``SAME_STEP``
autoreset, as Stable-Baselines3 does): the batch holds the new episode's first
observation, and ``infos["final_obs"]`` / ``infos["final_info"]`` (with their ``_``
masks) hold the last one and its info (``result``, ``illegal``, ``truncated``). Its
next episode is dealt from the environment's own generator, seeded by the first
``reset(seed=...)``.

Why in one process: a step of this environment costs a fraction of a millisecond, less
than sending an observation through a pipe to a worker and back, so subprocess vector
environments (Stable-Baselines3's ``SubprocVecEnv``, Gymnasium's ``AsyncVectorEnv``)
step it more slowly than one process does (``docs/learning.md`` has the figures; ``arena
bench env --vector`` measures them). Run several of these, one per core, for more.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from .gym import ProjectLGym


class ProjectLVectorEnv(gym.vector.VectorEnv):
    """``num_envs`` :class:`ProjectLGym` in one process; see the module docstring."""

    metadata = {"render_modes": [], "autoreset_mode": AutoresetMode.SAME_STEP}

    def __init__(self, num_envs: int = 8, **kwargs):
        if int(num_envs) < 1:
            raise ValueError(f"num_envs must be at least 1, got {num_envs!r}")
        kwargs.setdefault("json_obs", False)
        self.num_envs = int(num_envs)
        self.envs = [ProjectLGym(**kwargs) for _ in range(self.num_envs)]
        first = self.envs[0]
        self.single_observation_space = first.observation_space
        self.single_action_space = first.action_space
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._obs = np.zeros((self.num_envs, first.table.obs_low.shape[0]), np.float32)
        self._mask = np.zeros((self.num_envs, first.table.action_size), np.int8)
        self._rewards = np.zeros(self.num_envs, np.float64)
        self._term = np.zeros(self.num_envs, np.bool_)
        self._trunc = np.zeros(self.num_envs, np.bool_)

    def _put(self, i: int, obs: dict) -> None:
        self._obs[i] = obs["observation"]
        self._mask[i] = obs["action_mask"]

    def _batch(self) -> dict:
        return {"observation": self._obs.copy(), "action_mask": self._mask.copy()}

    def reset(self, *, seed=None, options: dict | None = None):
        """Reset every environment; ``seed`` an int (env ``i`` gets ``seed + i``), a list
        of seeds (None for unseeded) or None."""
        if seed is None or isinstance(seed, (int, np.integer)):
            seeds = [None if seed is None else int(seed) + i for i in range(self.num_envs)]
        else:
            seeds = list(seed)
            if len(seeds) != self.num_envs:
                raise ValueError(f"{self.num_envs} environments need {self.num_envs} seeds, got {len(seeds)}")
        infos: dict = {}
        for i, (env, s) in enumerate(zip(self.envs, seeds)):
            obs, info = env.reset(seed=s, options=options)
            self._put(i, obs)
            if info:
                infos = self._add_info(infos, info, i)
        return self._batch(), infos

    def step(self, actions):
        """Step every environment with its action; ended ones are reset at once."""
        actions = np.asarray(actions)
        if actions.shape != (self.num_envs,):
            raise ValueError(f"step takes {self.num_envs} actions, got shape {actions.shape}")
        infos: dict = {}
        for i, env in enumerate(self.envs):
            obs, reward, term, trunc, info = env.step(int(actions[i]))
            self._rewards[i], self._term[i], self._trunc[i] = reward, term, trunc
            if term or trunc:
                infos = self._add_info(infos, {"final_obs": obs, "final_info": info}, i)
                obs, info = env.reset()
            self._put(i, obs)
            if info:
                infos = self._add_info(infos, info, i)
        return self._batch(), self._rewards.copy(), self._term.copy(), self._trunc.copy(), infos

    def action_masks(self) -> np.ndarray:
        """The legal-action masks now, ``(num_envs, actions)`` booleans (MaskablePPO's
        ``action_masks()``)."""
        return self._mask.astype(bool)

    def set_opponents(self, opponents) -> None:
        """Every environment plays its next episodes against ``opponents``."""
        for env in self.envs:
            env.set_opponents(opponents)

    def close_extras(self, **kwargs) -> None:
        for env in self.envs:
            env.close()
