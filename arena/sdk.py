"""A small SDK for protocol bots written in Python.

A bot is a subclass of :class:`Bot` that implements :meth:`Bot.act` (and, if it wants,
the decisions), then calls :meth:`Bot.run`::

    import random
    from arena.sdk import Bot

    class Lucky(Bot):
        name, version, want_legal = "lucky", "1.0", True

        def act(self, observation):
            return random.choice(self.legal)          # an R14 action (a dict)

    if __name__ == "__main__":
        Lucky().run()

``run`` reads the arena's messages from stdin and writes replies to stdout, one JSON
line each, echoing every request id. Print debugging output to stderr (it goes to the
bot's log). ``self.hello`` holds the handshake (seat, players, rules, cards, time
control), ``self.legal`` the legal options of the current request (when ``want_legal``),
``self.events`` the public events since the bot's previous request, ``self.clock`` its
time limits. :meth:`Bot.game` rebuilds an engine :class:`~engine.game.Game` from an
observation for bots that want to search with the project's engine.
"""

from __future__ import annotations

import os
import random
import sys


def _shadowing_file() -> str | None:
    """A bot's own ``engine.py`` (or ``engine/`` without ``__init__``) beside its script, which
    Python would import instead of the project's ``engine`` package."""
    here = os.path.abspath(sys.path[0] or ".") if sys.path else None
    for name in ("engine.py", "engine"):
        path = os.path.join(here, name) if here else None
        if path and os.path.exists(path) and not os.path.exists(os.path.join(path, "__init__.py")) \
                and os.path.abspath(os.path.dirname(os.path.dirname(__file__))) != here:
            return path
    return None


def _import_engine_first() -> None:
    """Import the project's ``engine`` before a bot's ``engine.py`` can shadow it.

    The script's folder comes first on ``sys.path``, so ``import engine`` there would find
    the bot's file and the SDK's ``engine.observation`` would fail with "'engine' is not a
    package". The SDK imports the package with that folder left out, and says on stderr
    (the bot's log) that ``import engine`` now means the project's package.
    """
    shadow = _shadowing_file()
    if shadow is None or "engine" in sys.modules:
        return
    here = os.path.abspath(sys.path[0] or ".")
    saved = sys.path[:]
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    try:
        import engine.observation  # noqa: F401
    except ImportError:
        return
    finally:
        sys.path[:] = saved
    print(f"arena.sdk: {shadow} has the name of the project's package 'engine'; `import engine` gives "
          f"the project's package, rename your file to import it", file=sys.stderr)


_import_engine_first()

from .jsonline import line as json_line, loads  # noqa: E402  (after the engine is imported)


class MissingDecision(NotImplementedError):
    """The bot has no answer of its own for a request: its class must implement the method
    the message names (``act`` always; a decision without options offered needs its own)."""


class Bot:
    """Base class of a protocol bot; override :meth:`act` and, if needed, the decisions."""

    name = "bot"
    version = "0.1"
    #: ask the arena to include the legal options in every request
    want_legal = False
    #: CPython's garbage collector while :meth:`run` serves the process's stdin: its
    #: thresholds (see :func:`gc.set_threshold`), or None to keep the interpreter's (700, 10, 10)
    gc_thresholds: tuple[int, int, int] | None = (10_000, 20, 20)

    def __init__(self) -> None:
        self.hello: dict = {}
        self.seat = -1
        self.legal: list | None = None
        self.events: list = []
        self.clock: dict = {}
        self.rng = random.Random()

    # ------------------------------------------------------------------ override these
    def new_game(self, hello: dict) -> None:
        """Called on every ``hello`` (a process may play several games)."""

    def act(self, observation: dict) -> dict:
        """The R14 action to play now (``observation["actions_left"]`` actions are left)."""
        raise MissingDecision("a bot must implement act(observation)")

    def reward(self, observation: dict) -> dict:
        """The reward decision (R9.3); by default the first option offered."""
        return self._first_option("reward", observation)

    def level_up(self, observation: dict) -> dict:
        """The level-up decision (R11.3); by default decline every step."""
        return {"type": "level_up", "steps": []}

    def finish(self, observation: dict) -> dict:
        """The finishing touches (R6); by default place nothing."""
        return {"type": "finish", "placements": []}

    def game_over(self, result: dict) -> None:
        """Called with the result when a game ends."""

    # ------------------------------------------------------------------ helpers
    def game(self, observation: dict):
        """An engine ``Game`` rebuilt from ``observation`` (decks unknown) for search."""
        module = sys.modules.get("engine")
        if module is not None and not hasattr(module, "__path__"):
            raise ImportError(f"{getattr(module, '__file__', 'a module named engine')} shadows the project's "
                              f"package 'engine' (it was imported before arena.sdk); rename that file")
        from engine.observation import game_from_observation
        return game_from_observation(observation)

    def _first_option(self, kind: str, observation: dict) -> dict:
        if self.legal:
            return self.legal[0]
        options = (observation.get("decision") or {}).get("options") or []
        if options:
            first = options[0]
            return first if isinstance(first, dict) and "type" in first else {"type": kind, "take": first}
        raise MissingDecision(f"{type(self).__name__} must implement {kind}() or set want_legal = True")

    # ------------------------------------------------------------------ the loop
    def handle(self, msg: dict) -> dict | None:
        """The reply to one arena message (None for messages without a reply)."""
        kind = msg.get("type")
        if kind == "hello":
            self.hello = msg
            self.seat = msg.get("seat", -1)
            seed = msg.get("seed")
            if seed is not None:
                self.rng.seed(seed)
            self.new_game(msg)
            return {"type": "ready", "id": msg["id"], "name": self.name, "version": self.version,
                    "legal_actions": bool(self.want_legal)}
        if kind in ("action", "reward", "level_up", "finish"):
            self.legal = msg.get("legal")
            self.events = msg.get("events", [])
            self.clock = msg.get("clock", {})
            action = getattr(self, "act" if kind == "action" else kind)(msg["observation"])
            return {"id": msg["id"], "action": action}
        if kind == "game_over":
            self.events = msg.get("events", [])
            self.game_over(msg.get("result", {}))
        return None

    def _quiet_collector(self) -> None:
        """Keep the cyclic garbage collector off what the bot made before serving.

        What is imported and built by now lives as long as the process: frozen
        (:func:`gc.freeze`), no collection walks it again. With :attr:`gc_thresholds`, the
        young generation is collected every 10,000 net allocations instead of 700: a bot
        whose caches grow (greedy's solver memo, thousands of entries a game) was collected
        about 60 times a game under the defaults, a tenth of its CPU. Cycles are still
        collected, in larger batches."""
        import gc

        gc.freeze()
        if self.gc_thresholds is not None:
            gc.set_threshold(*self.gc_thresholds)

    def run(self, stdin=None, stdout=None) -> None:
        """Serve the protocol on stdin/stdout until ``quit`` or end of input."""
        if stdin is None:  # the bot's own process (streams given: a test's, left as they are)
            self._quiet_collector()
        stdin = stdin or sys.stdin.buffer
        stdout = stdout or sys.stdout.buffer
        for line in stdin:
            if not line.strip():
                continue
            msg = loads(line)
            if msg.get("type") == "quit":
                return
            reply = self.handle(msg)
            if reply is not None:
                stdout.write(json_line(reply))
                stdout.flush()
