"""From a trained policy to a bot: any ``obs, mask -> index`` function plays Project L.

As a protocol bot process (so ``arena play --cmd``, tournaments and leagues take it as
they take any bot)::

    python -m arena.rl.policy_bot my_module:policy
    python -m arena.rl.policy_bot my_module:load_policy weights.npz      # a factory and its arguments
    arena play random --cmd "python -m arena.rl.policy_bot my_module:policy" --seed 3

``my_module:policy`` is a function ``policy(obs, mask) -> int`` taking the observation
array and the int8 legal-action mask of :mod:`arena.rl` and returning a legal index (a
policy whose attribute ``observation`` is ``"universal"`` gets the universal arrays and
gives a universal index, :mod:`arena.rl.universal`); with
more arguments after it, the named attribute is a factory called with them (as strings)
that returns such a function. ``my_module`` may also be a path to a ``.py`` file.

For every request the bot rebuilds the game from the observation it receives
(:func:`engine.observation.game_from_observation`), asks the policy for indices until a
whole move is chosen (a master action or the finishing touches take several; see
:mod:`arena.rl.spaces`) and answers in R14's JSON. The array it passes is built from the
JSON observation, the same array the environments give (tests check they agree). An
index the mask forbids is replaced by the first legal one, with a line on stderr.

:class:`InProcessPolicy` wraps the same function as an in-process policy
(``choose(game, rng)``, like the built-in bots') for quick evaluation without processes.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path
from typing import Callable

import numpy as np

from arena.sdk import Bot
from engine import action_to_json
from engine.observation import game_from_observation

from .observe import observer
from .spaces import Chooser, IllegalIndex

PolicyFn = Callable[[np.ndarray, np.ndarray], int]


def choose_move(game, seat: int, policy: PolicyFn, view: dict | None = None, log=None):
    """Ask ``policy`` for indices until a whole move of ``seat`` is chosen; the engine move.

    A policy with the attribute ``observation = "universal"`` gets and gives the
    universal arrays and indices (:mod:`arena.rl.universal`)."""
    chooser = Chooser(game)
    obs = observer(game.rules)
    uni = None
    if getattr(policy, "observation", "native") == "universal":
        from .universal import universal
        uni = universal(game.rules)
    while True:
        move = chooser.forced()
        if move is not None:
            return move
        mask = chooser.mask()
        array = obs.encode(game, seat, chooser, view=view)
        if uni is None:
            index = int(policy(array, mask))
        else:
            index = int(policy(uni.observation(array), uni.mask(mask)))
            index = uni.native_list[index] if 0 <= index < uni.act_size else -1
        if not (0 <= index < len(mask) and mask[index]):
            if log is not None:
                log(f"policy chose index {index}, which the mask forbids; playing the first legal index instead")
            index = int(np.flatnonzero(mask)[0])
        try:
            move = chooser.play(index)
        except IllegalIndex:  # pragma: no cover - the mask was checked above
            raise
        if move is not None:
            return move


class PolicyBot(Bot):
    """A protocol bot that plays the moves an ``obs, mask -> index`` function chooses."""

    name = "rl-policy"
    version = "1.0"

    def __init__(self, policy: PolicyFn, name: str | None = None):
        super().__init__()
        self.policy = policy
        self._warmed: set = set()
        if name:
            self.name = name

    def new_game(self, hello: dict) -> None:
        """Compile the rules, build the tables and call the policy once, on a deal of
        these rules, before the first move's clock runs.

        The call happens within the handshake's limit (``--startup-ms``), not the first
        move's: a framework's first call is slow (torch builds its kernels, a model is
        read lazily), and a policy that fails on it (a model made for another
        observation, a missing file) fails here, so the arena reports a crash at start
        with the policy's traceback on stderr, not a first move that ran out of time.
        Its answer is thrown away. Once per rule set and seat count in a process."""
        from engine import Game, RuleSpec, compile_rules
        rules = compile_rules(RuleSpec.from_json(hello["rules"]), hello["players"])
        observer(rules)
        key = (rules.spec.label(), hello["players"])
        if key not in self._warmed:
            game = Game.new(rules, hello["players"], 0)
            choose_move(game, game.to_move(), self.policy)
            self._warmed.add(key)

    def _choose(self, observation: dict) -> dict:
        game = game_from_observation(observation)
        move = choose_move(game, self.seat if self.seat >= 0 else observation["seat"], self.policy,
                           view=observation, log=lambda text: print(text, file=sys.stderr))
        return action_to_json(game.rules, move)

    act = reward = level_up = finish = _choose


class InProcessPolicy:
    """An ``obs, mask -> index`` function as an in-process policy (``choose(game, rng)``)."""

    def __init__(self, policy: PolicyFn, name: str = "rl-policy"):
        self.policy = policy
        self.name = name

    def choose(self, game, rng):
        """The whole move the function chooses for the seat to move (the game is not changed)."""
        return choose_move(game, game.to_move(), self.policy)


def load(target: str, args: list[str] | None = None) -> PolicyFn:
    """The policy named ``module:attribute`` (or ``path/file.py:attribute``); with
    ``args``, the attribute is a factory called with them."""
    module_name, sep, attr = target.partition(":")
    if not sep or not module_name or not attr:
        raise ValueError(f"{target!r}: give the policy as module:function (or path/to/file.py:function)")
    if module_name.endswith(".py"):
        path = Path(module_name)
        if not path.is_file():
            raise ValueError(f"{module_name}: no such file")
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    else:
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            raise ValueError(f"{module_name}: cannot import it ({exc})") from None
    fn = getattr(module, attr, None)
    if fn is None or not callable(fn):
        raise ValueError(f"{target}: {module_name} has no function {attr!r}")
    return fn(*args) if args else fn


def main(argv: list[str] | None = None) -> int:
    """``python -m arena.rl.policy_bot module:function [factory arguments...]``."""
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] in ("-h", "--help"):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        print("usage: python -m arena.rl.policy_bot module:function [factory arguments...]", file=sys.stderr)
        return 2
    try:
        policy = load(args[0], args[1:])
    except (ValueError, OSError) as exc:
        print(f"policy_bot: {exc}", file=sys.stderr)
        return 2
    PolicyBot(policy, name=args[0].rpartition(":")[2]).run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
