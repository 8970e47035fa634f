"""Opponents for the Gymnasium environment: built-in bots, policies, snapshots, pools.

:class:`~arena.rl.gym.ProjectLGym` plays the other seats in-process with *opponents*.
:func:`as_opponent` turns any of these into one (an object with ``choose(game, rng)``,
like the built-in bots' policies):

- a built-in name: ``"random"``, ``"greedy"``, ``"planner-fast"`` (:func:`arena.plugins.policy`);
- a saved snapshot, as the policy bot names it: ``"module:factory path"``, e.g.
  ``"arena.rl.examples.maskable_ppo:load_policy run/step_20000.zip"`` (the factory is
  called with the words after it; see :func:`arena.rl.policy_bot.load`);
- an ``obs, mask -> index`` function (a policy being trained, or a frozen copy of it),
  played through :class:`~arena.rl.policy_bot.InProcessPolicy`;
- any object with ``choose(game, rng)`` (returning a whole engine move).

:class:`OpponentPool` is the self-play helper: it keeps the built-in bots and a bounded
list of snapshots of the learner, and the environment draws the opponents of each episode
from it (``ProjectLGym(opponents=pool)``)::

    pool = OpponentPool(builtins=("random", "greedy"), size=8)
    env = ProjectLGym(opponents=pool, seat="rotate", shaping="score")
    ...
    pool.add(frozen_copy_of_my_policy, name="step 20000")   # every so many steps

Draws come from the environment's own generator, so a seeded ``reset`` draws the same
opponents.
"""

from __future__ import annotations

import random
from typing import Iterable


def as_opponent(spec):
    """An in-process opponent (``choose(game, rng)``) from a name, a ``module:factory
    args`` snapshot, an ``obs, mask -> index`` function or a policy object."""
    if isinstance(spec, str):
        if ":" in spec:
            from .policy_bot import InProcessPolicy, load
            target, *args = spec.split()
            return InProcessPolicy(load(target, args), name=spec)
        from arena.plugins import policy
        return policy(spec)  # a typo fails here, with the known names
    if hasattr(spec, "choose"):
        return spec
    if callable(spec):
        from .policy_bot import InProcessPolicy
        return InProcessPolicy(spec, name=getattr(spec, "__name__", "policy"))
    raise TypeError(f"an opponent is a bot name, 'module:factory args', an obs, mask -> index function or an "
                    f"object with choose(game, rng); got {spec!r}")


def opponent_name(spec) -> str:
    """A short name for an opponent specification (for logs and infos)."""
    if isinstance(spec, str):
        return spec
    return str(getattr(spec, "name", None) or getattr(spec, "__name__", None) or type(spec).__name__)


class OpponentPool:
    """Built-in bots and past snapshots of the learner, to draw opponents from.

    ``builtins`` are names (or any opponent :func:`as_opponent` takes) that always stay;
    :meth:`add` appends a snapshot and drops the oldest beyond ``size``. Each draw takes a
    built-in with probability ``builtin_share`` (when there are snapshots; always when
    there are none), otherwise a snapshot, the ``latest_share`` of the time the newest,
    else one uniformly among the kept ones.
    """

    def __init__(self, builtins: Iterable = ("random", "greedy"), size: int = 8, builtin_share: float = 0.3,
                 latest_share: float = 0.3):
        self.builtins = [(opponent_name(b), as_opponent(b)) for b in builtins]
        self.size = int(size)
        self.builtin_share = float(builtin_share)
        self.latest_share = float(latest_share)
        self.snapshots: list[tuple[str, object]] = []
        self.draws: dict[str, int] = {}

    def add(self, policy, name: str | None = None) -> None:
        """Keep ``policy`` (anything :func:`as_opponent` takes) as a snapshot; the oldest
        beyond ``size`` is dropped. Pass a frozen copy, not the learner itself, unless you
        want the latest weights each time."""
        self.snapshots.append((name or f"snapshot {len(self.snapshots)}", as_opponent(policy)))
        del self.snapshots[:-self.size]

    def names(self) -> list[str]:
        """The names of everything that may be drawn now."""
        return [n for n, _ in self.builtins] + [n for n, _ in self.snapshots]

    def sample(self, rng: random.Random) -> tuple[str, object]:
        """``(name, opponent)`` of one draw."""
        if not self.snapshots or (self.builtins and rng.random() < self.builtin_share):
            if not self.builtins:
                raise ValueError("the pool is empty: give built-in bots or add a snapshot first")
            drawn = self.builtins[rng.randrange(len(self.builtins))]
        elif rng.random() < self.latest_share:
            drawn = self.snapshots[-1]
        else:
            drawn = self.snapshots[rng.randrange(len(self.snapshots))]
        self.draws[drawn[0]] = self.draws.get(drawn[0], 0) + 1
        return drawn


class Opponents:
    """What the environment holds: per opponent seat, a fixed opponent or a pool to draw
    from at each reset."""

    def __init__(self, spec, count: int):
        specs = list(spec) if isinstance(spec, (list, tuple)) else [spec] * count  # one (pool) for every seat
        if len(specs) != count:
            raise ValueError(f"{count + 1} players need {count} opponents, got {len(specs)}")
        self.entries: list = [s if hasattr(s, "sample") else (opponent_name(s), as_opponent(s)) for s in specs]

    def draw(self, rng: random.Random) -> list[tuple[str, object]]:
        """Each opponent seat's ``(name, opponent)`` for the next episode."""
        return [e.sample(rng) if hasattr(e, "sample") else e for e in self.entries]

