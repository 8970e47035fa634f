"""Project L as a PettingZoo AEC environment: every seat an agent, 1-4 seats, any rules.

::

    from arena.rl.aec import env
    e = env(rules="revised,ghost", players=3)      # wrapped, as PettingZoo's classic games
    e.reset(seed=7)
    for agent in e.agent_iter():
        obs, reward, terminated, truncated, info = e.last()
        if terminated or truncated:
            action = None
        else:
            action = e.action_space(agent).sample(obs["action_mask"])
        e.step(action)

Agents are ``seat_0`` ... ``seat_{n-1}``; the one to move is ``agent_selection`` (the same
seat for the steps of a sequence: a master action, ghost placements, level-up steps,
finishing touches; see :mod:`arena.rl.spaces`). Observations are
``{"observation": float32 array, "action_mask": int8 array}`` (:mod:`arena.rl.observe`);
``infos[agent]["observation"]`` is the engine's JSON observation of that seat (turn it
off with ``json_obs=False`` for speed). Rewards come at the end of the game (``reward``:
``outcome`` or ``score``, see :meth:`arena.rl.core.Table.rewards`). ``reset(seed=s)``
deals the game ``arena play --seed s`` deals, so episodes are reproducible.

``shaping="score"``, ``"progress"`` or ``"margin"`` also gives every seat, at every step,
``shaping_scale`` times the change of its potential (:meth:`arena.rl.core.Table.potential`),
so that a seat's rewards over a game sum to its end reward plus ``shaping_scale`` times
its final potential. ``obs="universal"`` gives the observation and action index that are
the same for every rule set and seat count (:mod:`arena.rl.universal`). :meth:`state`
is the global state: every seat's observation array, seat 0 first (``state_space``).

An index the mask forbids ends the game: the agent that gave it gets ``illegal_reward``
(-1) and the others 0, and ``infos[agent]["illegal"]`` says why (``illegal="raise"``
raises :class:`~arena.rl.spaces.IllegalIndex` instead). An action that is not an integer
raises :class:`~arena.rl.core.NotAnIndex`, a step once every agent is done
:class:`~arena.rl.core.EpisodeOver`. ``max_steps`` truncates an episode after that many
steps (the rules' own ``max_rounds`` already bounds a game): every agent's truncation is
set, no end reward is given (the game has no outcome) and ``infos[agent]["truncated"]``
says so, with ``infos[agent]["scores"]`` the scores at the cut. When the game ends,
``infos[agent]["result"]`` is the engine's result (``scores``, ``ranking``, ...).

As in PettingZoo's classic games, :func:`raw_env` is the bare environment and :func:`env`
wraps it for order (:class:`OrderEnforcing`: PettingZoo's ``OrderEnforcingWrapper``, no
reading of ``rewards`` and the like before reset, and a step before reset or after the
end raises :class:`~arena.rl.core.EpisodeOver`); both keep every refusal above. The game is played in turns, with
several steps for a compound move, so the environment is not parallelizable
(``metadata["is_parallelizable"]`` is False: there is no Parallel API form).
"""

from __future__ import annotations

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers
from pettingzoo.utils.env_logger import EnvLogger
from pettingzoo.utils.wrappers.order_enforcing import AECOrderEnforcingIterable, AECOrderEnforcingIterator

from engine.actions import OVER

from .core import EpisodeOver, Table
from .spaces import IllegalIndex


class MaskedDiscrete(spaces.Discrete):
    """Gymnasium's ``Discrete`` with a fast ``sample(mask)`` that draws what
    ``Discrete.sample`` draws: the same index from the same seed (a test compares them).

    ``Discrete.sample`` takes the legal indices and calls ``np_random.choice`` on them,
    which is ``integers(0, k)``: one 32-bit word of the bit generator scaled by Lemire's
    method (a word is rejected only when it would bias the result; for k = 1 nothing is
    drawn). Here the legal indices come from one ``nonzero`` on a boolean view of the mask,
    the word from the bit generator's own ``next_uint32`` (through its ctypes interface,
    under its lock, as ``integers`` draws it) and the scaling is done in Python: a
    random-play step spent more in ``integers``' argument handling and in checking the
    mask than in the engine's listing of the actions. Any mask other than an int8 array
    of 0s and 1s of the right shape goes to ``Discrete.sample``, which checks it."""

    def __init__(self, n, seed=None, start=0):
        super().__init__(n, seed=seed, start=start)
        self._mask_shape = (int(self.n),)
        self._draw = None  # word_source(np_random), made on first use

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_draw"] = None  # ctypes functions do not pickle; made again on first use
        return state

    def __setstate__(self, state):
        super().__setstate__(state)
        self._mask_shape = (int(self.n),)  # absent from spaces pickled by earlier versions
        self._draw = None

    def sample(self, mask=None, probability=None):
        if probability is None and type(mask) is np.ndarray and mask.dtype is _INT8 and mask.shape == self._mask_shape:
            legal = mask.view(_BOOL).nonzero()[0]  # every nonzero byte: on booleans, ten times flatnonzero's speed
            k = legal.size
            if mask[legal].tobytes() == b"\x01" * k:  # and each of them is 1 (a negative or a 2 is refused below)
                if k == 0:
                    return self.start
                if k == 1:
                    return self.start + legal[0]  # integers(0, 1) draws nothing
                draw = self._draw
                if draw is None or draw[0] is not self._np_random:
                    draw = self._draw = word_source(self.np_random)
                _, word, state, lock = draw
                if word is None:
                    return self.start + legal[draw_below(draw, k)]
                with lock:  # draw_below's first word, in line
                    m = word(state) * k
                if m & 0xFFFFFFFF < k:  # rarely: maybe rejected
                    m = _redraw(draw, k, m)
                return self.start + legal[m >> 32]
        return super().sample(mask, probability)


_INT8, _BOOL = np.dtype(np.int8), np.dtype(np.bool_)


def word_source(rng: np.random.Generator) -> tuple:
    """``(rng, next_uint32, state, lock)`` for :func:`draw_below`: the bit generator's own
    32-bit draw (through its ctypes interface, called without releasing the GIL), or
    ``(rng, None, None, None)`` when it has none."""
    global _WORD
    import ctypes
    bits = rng.bit_generator
    try:
        iface = bits.ctypes
        if _WORD is None:  # a new prototype is a new class: made once
            _WORD = ctypes.PYFUNCTYPE(ctypes.c_uint32, ctypes.c_void_p)
        word = ctypes.cast(iface.next_uint32, _WORD)
    except Exception:  # noqa: BLE001 - any failure: integers() draws the same, only slower
        return rng, None, None, None
    return rng, word, iface.state, bits.lock


_WORD = None  # the ctypes prototype of next_uint32, held the GIL


def draw_below(source: tuple, k: int) -> int:
    """What ``rng.integers(0, k)`` returns for ``k`` >= 2, and the same words drawn from
    the generator of ``source`` (:func:`word_source`): a 32-bit word times ``k``, its high
    half the result, a word rejected when its low half falls below ``2**32 % k`` (Lemire's
    method, as numpy's bounded draw makes it, under the bit generator's lock)."""
    rng, word, state, lock = source
    if word is None or k > 0xFFFFFFFF:
        return int(rng.integers(0, k))
    with lock:
        m = word(state) * k
    if m & 0xFFFFFFFF < k:  # rarely (k in 2**32): then maybe rejected
        m = _redraw(source, k, m)
    return m >> 32


def _redraw(source: tuple, k: int, m: int) -> int:
    """Lemire's rejection: ``m`` (a word times ``k``) or, while its low half is below
    ``2**32 % k``, the next word times ``k``."""
    _, word, state, lock = source
    threshold = (0x100000000 - k) % k
    while m & 0xFFFFFFFF < threshold:
        with lock:
            m = word(state) * k
    return m


def observation_space(table: Table) -> spaces.Dict:
    """The Dict space of a table's observations."""
    return spaces.Dict({
        "observation": spaces.Box(table.obs_low, table.obs_high, dtype=np.float32),
        "action_mask": spaces.Box(0, 1, (table.action_size,), dtype=np.int8),
    })


class ProjectLEnv(AECEnv):
    """The AEC environment; see the module docstring."""

    metadata = {"name": "project_l_v0", "render_modes": ["ansi"], "is_parallelizable": False}

    def __init__(self, rules=None, players: int = 2, params: dict | None = None, reward: str = "outcome",
                 json_obs: bool = True, illegal: str = "terminate", illegal_reward: float = -1.0,
                 max_steps: int | None = None, render_mode: str | None = None, shaping: str | None = None,
                 shaping_scale: float = 0.1, obs: str = "native"):
        super().__init__()
        if illegal not in ("terminate", "raise"):
            raise ValueError(f"illegal must be terminate or raise, got {illegal!r}")
        self.table = Table(rules, players, params, reward, json_obs, shaping, shaping_scale, obs)
        self.possible_agents = [f"seat_{i}" for i in range(players)]
        self.agent_name_mapping = {a: i for i, a in enumerate(self.possible_agents)}
        obs_space = observation_space(self.table)
        act_space = MaskedDiscrete(self.table.action_size)
        self.state_space = spaces.Box(np.tile(self.table.obs_low, players), np.tile(self.table.obs_high, players),
                                      dtype=np.float32)
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: act_space for a in self.possible_agents}
        self.illegal = illegal
        self.illegal_reward = float(illegal_reward)
        self.max_steps = max_steps
        self.render_mode = render_mode
        self._rng = np.random.default_rng()
        self._rng_seed = None  # a reset's seed, until the generator it seeds is needed (see _generator)
        self.agents = []

    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def action_space(self, agent):
        return self.action_spaces[agent]

    # ------------------------------------------------------------------ episode
    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        if seed is not None:
            self._rng, self._rng_seed = None, seed  # made from the seed when first needed
            game_seed = int(seed)
        else:
            game_seed = int(self._generator().integers(2**31))
        self.table.deal(game_seed)
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self.steps = 0
        self._rewarded = False
        self._phi = self.table.potentials()
        self._after_move()

    def observe(self, agent):
        return self.table.observe(self.agent_name_mapping[agent])

    # ------------------------------------------------------------------ search
    _KEPT = ("agents", "rewards", "_cumulative_rewards", "terminations", "truncations", "infos", "steps",
             "_rewarded", "_phi", "agent_selection")

    def clone(self) -> dict:
        """The environment's whole state (game, sequence under way, agents, rewards,
        step count) as a value :meth:`restore` takes any number of times: search a tree of
        steps and come back. Plain copies, so a state outlives later steps."""
        import copy
        kept = {k: copy.deepcopy(getattr(self, k)) for k in self._KEPT if hasattr(self, k)}
        rng = copy.deepcopy(self._generator().bit_generator.state)
        return {"table": self.table.snapshot(), "env": kept, "rng": rng}

    def restore(self, state: dict) -> None:
        """Go back to a state :meth:`clone` returned."""
        import copy
        self.table.restore(state["table"])
        for k, v in state["env"].items():
            setattr(self, k, copy.deepcopy(v))
        self._generator().bit_generator.state = copy.deepcopy(state["rng"])

    def _generator(self) -> np.random.Generator:
        """The generator of unseeded resets: seeded by the last seeded reset, made when
        first needed (runs that seed every reset never need it; making it took about 1%
        of a random game)."""
        if self._rng is None:
            self._rng = np.random.default_rng(self._rng_seed)
        return self._rng

    def state(self) -> np.ndarray:
        """The global state: every seat's observation array, seat 0 first."""
        return np.concatenate([self.table.observe(s)["observation"] for s in range(self.table.players)])

    def legal_actions(self, agent: str | None = None) -> list[int]:
        """The legal indices of ``agent`` (default: the agent to move), ascending."""
        agent = agent or self.agent_selection
        obs = self.observe(agent)
        return obs["action_mask"].view(np.bool_).nonzero()[0].tolist()

    def step(self, action) -> None:
        if not self.agents:
            raise EpisodeOver("the episode is over: call reset() before stepping again")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        self._cumulative_rewards[agent] = 0.0
        if self._rewarded:
            self._clear_rewards()
            self._rewarded = False
        self.steps += 1
        try:
            applied = self.table.play(action)
        except IllegalIndex as exc:
            if self.illegal == "raise":
                raise
            for a in self.agents:
                self.terminations[a] = True
                self.infos[a] = {"illegal": f"{agent}: {exc}"}
            self.rewards[agent] = self.illegal_reward
            self._rewarded = True
            self._accumulate_rewards()
            return
        table = self.table
        game = table.game
        if game.phase != OVER and self.max_steps is None and not table.json_obs:  # _after_move's usual step
            self.agent_selection = self.possible_agents[game.seat]
        else:
            self._after_move()
        if applied and table.shaping:
            scale = self.table.shaping_scale
            phi = self.table.potentials()
            for a, now, before in zip(self.possible_agents, phi, self._phi):
                if a in self.rewards:
                    self.rewards[a] += scale * (now - before)
            self._phi = phi
            self._rewarded = True
        if self._rewarded:  # rewards come at the end, for an illegal index, or shaped at each move
            self._accumulate_rewards()

    def _after_move(self) -> None:
        game = self.table.game
        if game.phase != OVER and self.max_steps is None and not self.table.json_obs:  # the usual step
            self.agent_selection = self.possible_agents[game.seat]
            return
        if game.is_over:
            for a, r in zip(self.possible_agents, self.table.rewards()):
                if a in self.rewards:
                    self.rewards[a] = r
                    self.terminations[a] = True
            self._rewarded = True
            self.agent_selection = self.agents[0]
        else:
            self.agent_selection = self.possible_agents[game.to_move()]
            if self.max_steps is not None and self.steps >= self.max_steps:
                for a in self.agents:
                    self.truncations[a] = True
        if self.table.json_obs:
            for a in self.agents:
                self.infos[a] = self.table.info(self.agent_name_mapping[a])
        if game.is_over:
            result = self.table.game.result()
            for a in self.agents:
                self.infos[a]["result"] = result
        elif self.agents and self.truncations[self.agents[0]]:
            scores = game.scores()
            for a in self.agents:
                self.infos[a]["truncated"] = f"step limit {self.max_steps}: the game was not over, so there is no outcome"
                self.infos[a]["scores"] = scores

    # ------------------------------------------------------------------ display
    def render(self):
        if self.render_mode != "ansi":
            return None
        return render_text(self.table)

    def close(self) -> None:
        pass


def render_text(table: Table) -> str:
    """The game as text: round, phase and each seat's supply, puzzles and score."""
    from arena.replay.render import render_player, render_rows
    game = table.game
    lines = [f"round {game.round}, {game.phase_name}, seat {game.to_move()} to move"]
    lines += render_rows(game)
    for s in range(game.n):
        lines += render_player(game, s)
    return "\n".join(lines)


def raw_env(**kwargs) -> ProjectLEnv:
    """A new bare :class:`ProjectLEnv` (PettingZoo's classic name)."""
    return ProjectLEnv(**kwargs)


class OrderEnforcing(wrappers.OrderEnforcingWrapper):
    """PettingZoo's ``OrderEnforcingWrapper`` (no ``observe``, ``state``, ``render`` or
    ``rewards`` before ``reset``), whose ``step`` refuses as the bare environment does:
    before the first reset or once every agent is done it raises
    :class:`~arena.rl.core.EpisodeOver` (PettingZoo's own asserts or only warns); any
    other action goes to the environment, which raises
    :class:`~arena.rl.core.NotAnIndex` for a non-integer and ends the game (or raises, with
    ``illegal="raise"``) on an index the mask forbids."""

    def step(self, action) -> None:
        if not self._has_reset:
            raise EpisodeOver("no episode yet: call reset() first")
        if not self.env.agents:
            raise EpisodeOver("the episode is over: call reset() before stepping again")
        self._has_updated = True
        self.env.step(action)

    # PettingZoo's wrapper answers ``last()`` and each turn of ``agent_iter()`` through its
    # ``__getattr__``, one hop per field (the agent, its reward, its flags, its info): a
    # third of a random-play step. These two read the environment's fields directly, after
    # the same checks.
    def last(self, observe: bool = True):
        if not self._has_reset:
            raise AttributeError("agent_selection cannot be accessed before reset")
        return self.env.last(observe)

    def agent_iter(self, max_iter: int = 2**63):
        if not self._has_reset:
            EnvLogger.error_agent_iter_before_reset()
        return _OrderedAgents(self, max_iter)


class _OrderedAgents(AECOrderEnforcingIterable):
    def __iter__(self):
        return _OrderedAgentIterator(self.env, self.max_iter)


class _OrderedAgentIterator(AECOrderEnforcingIterator):
    """PettingZoo's order-enforcing iterator (a step between two turns, or it asserts),
    reading the agents of the wrapped environment without the wrapper's ``__getattr__``."""

    def __next__(self):
        wrapper = self.env
        inner = wrapper.env
        if not inner.agents or self.iters_til_term <= 0:
            raise StopIteration
        self.iters_til_term -= 1
        assert wrapper._has_updated, "need to call step() or reset() in a loop over `agent_iter`"
        wrapper._has_updated = False
        return inner.agent_selection


def env(**kwargs):
    """A new :class:`ProjectLEnv` wrapped for order (:class:`OrderEnforcing`), as
    PettingZoo's classic games are. PettingZoo's ``TerminateIllegalWrapper`` and
    ``AssertOutOfBoundsWrapper`` are left out: the environment itself ends the game on an
    illegal index (``info["illegal"]``, ``illegal_reward``; or raises with
    ``illegal="raise"``) and refuses a non-integer with :class:`~arena.rl.core.NotAnIndex`,
    where those wrappers would warn, assert, and set ``truncations`` too."""
    return OrderEnforcing(raw_env(**kwargs))
