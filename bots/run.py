"""Run a built-in bot as a protocol bot process: ``python -m bots.run NAME``.

``NAME`` is a bot that registered an in-process policy (``random``, ``greedy``,
``planner``; see :func:`arena.plugins.policy`), which is wrapped: each request's observation is rebuilt into an engine ``Game``
(:func:`engine.observation.game_from_observation`) whose ``history`` is the game's public
events so far (each request brings those since the last), the policy chooses, and the
choice is sent back in R14's JSON: the policy sees what it would see in-process. ``pass`` is a trivial bot that passes and places nothing (for
tests and the protocol benchmark).
"""

from __future__ import annotations

import random
import sys

from arena.hookspecs import hookimpl
from arena.sdk import Bot

from .policy import process_command

#: milliseconds of each move's allowance kept back from a clock-reading policy
MARGIN_MS = 30


class PolicyBot(Bot):
    """A protocol bot that asks an in-process policy (``bots.policy``) for every decision."""

    version = "1.0"

    def __init__(self, name: str):
        super().__init__()
        self.name = name
        self.factory = _policy_factory(name)
        self.policy = self.factory()
        self.games = 0

    def new_game(self, hello: dict) -> None:
        """A new game on this process (``docs/protocol.md`` allows several): the random
        stream restarts from the arena's seed; a policy whose class says ``reusable = True``
        (its caches, such as greedy's solver memo, depend on nothing but the rules) is kept
        with its caches, any other is made anew."""
        from engine import RuleSpec, compile_rules
        from engine.observation import game_from_observation  # (imported before the clock runs)
        if not getattr(self.policy, "reusable", False) or self.games == 0:
            self.policy = self.factory()
        self.games += 1
        self.rng = random.Random(hello.get("seed"))
        self.rules = compile_rules(RuleSpec.from_json(hello["rules"]), hello["players"])
        self.history: list = []
        self._reuse: dict = {}  # the seats' puzzles of the previous request
        self._rebuild = game_from_observation

    def follow(self) -> list:
        """The game's history as this seat has been told it: ``(seat, action)`` per event
        (``None`` for a forfeit, as the engine keeps it; another seat's hidden finishing
        touches as their JSON), the events of this request appended."""
        from engine import action_from_json
        for event in self.events or []:
            if event.get("forfeit"):
                self.history.append((event.get("seat"), None))
                continue
            obj = event.get("action")
            try:
                action = obj if obj.get("hidden") else action_from_json(self.rules, obj)
            except Exception:  # noqa: BLE001 -- an event this engine cannot read stays as JSON
                action = obj
            self.history.append((event.get("seat"), action))
        self.events = []
        return self.history

    def _choose(self, observation: dict) -> dict:
        from engine import action_to_json
        game = self._rebuild(observation, self._reuse)
        game.history = list(self.follow())
        if hasattr(self.policy, "move_ms") and self.clock.get("move_ms"):
            # a policy that reads its clock (planner) gets this move's allowance, less a
            # margin for rebuilding the game and the pipe
            self.policy.move_ms = max(5, int(self.clock["move_ms"]) - MARGIN_MS)
        return action_to_json(game.rules, self.policy.choose(game, self.rng))

    act = reward = level_up = finish = _choose


def _policy_factory(name: str):
    """What makes the policy of the bot ``name``: a built-in's without loading the plugins
    (:func:`bots.policy.builtin_policy`), another plugin's through the plugin manager."""
    from .policy import builtin_policy

    found = builtin_policy(name)
    if found is not None:
        return found
    from arena.plugins import bots, policy

    entry = bots().get(name)
    if entry is None or entry.policy is None:
        policy(name)  # the KeyError that names the known policies
    return entry.policy


class PassBot(Bot):
    """Passes every turn, places nothing in the finishing touches."""

    name = "pass"
    version = "1.0"

    def act(self, observation: dict) -> dict:
        """Always ``pass``."""
        return {"type": "pass"}


class PassPolicy:
    """``pass`` in-process: the same moves as :class:`PassBot` (pass; the empty finishing
    touches; any other decision its first option)."""

    name = "pass"

    def choose(self, game, rng):
        from engine.actions import Pass

        options = game.legal_actions()
        return next((a for a in options if type(a) is Pass), options[0])


@hookimpl
def arena_register_bots(register) -> None:
    """Register the trivial ``pass`` bot, with its in-process policy."""
    register(name="pass", command=process_command("pass"),
             description="always passes and places nothing; for tests and benchmarks", policy=PassPolicy)


def main(argv: list[str] | None = None) -> int:
    """Entry point: ``python -m bots.run NAME``."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m bots.run NAME   (a built-in bot of `arena bots`, e.g. greedy, planner-fast or pass)", file=sys.stderr)
        return 2
    if args[0] == "pass":
        PassBot().run()
        return 0
    try:
        bot = PolicyBot(args[0])
    except KeyError as exc:
        print(exc.args[0], file=sys.stderr)
        return 2
    bot.run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
