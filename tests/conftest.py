"""Shared fixtures and helpers for the rule tests.

Most tests build precise states with explicit deals (decks top first) and by applying
actions in R14 JSON. Where a state cannot be reached quickly through play (a player who
owns an ``L4``, an empty reserve), the helpers below set it up through the game's public
attributes (``game.players[s].supply``, ``game.reserve``); each says so in its docstring.
"""

from __future__ import annotations

import random
import re

import pytest

from engine import Game, IllegalAction, RuleSpec, action_from_json

#: White cards with small recesses, handy for rule tests (cells of each recess).
W09 = [[2, 2], [3, 2]]          # I2 upright, 1 point, reward O1
W22 = [[2, 2], [3, 2]]          # I2 upright, 0 points, reward I2
W10 = [[1, 2], [2, 2], [3, 2]]  # I3 upright, 1 point, reward I2
W27 = [[2, 1], [2, 2], [2, 3]]  # I3 flat, 0 points, reward I3
W24 = [[2, 1], [3, 1], [3, 2]]  # L3, 0 points, reward L3
W31 = [[2, 1], [2, 2], [3, 1], [3, 2]]  # O4, 0 points, reward O4

#: A white deck that puts those cards in the row first (slots 0-3), then a few more.
SMALL_WHITES = ["W09", "W22", "W10", "W27", "W24", "W31", "W23", "W11"]
#: Five black cards: four go to the row, one stays in the deck.
FIVE_BLACKS = ["B13", "B14", "B15", "B16", "B17"]


def pytest_configure(config):
    """Stop at once, with a sentence, when the project is not installed: built-in variants
    and bots load through the ``arena`` entry-point group, which only an install declares.

    Every arena this run starts (in-process, workers, CLI subprocesses) carries one instance
    label in the machine-wide registry of bot uids, so the leftover checks look at this
    run's bots only, whatever other arenas run on the machine. Each pytest-xdist worker
    extends the label it inherits with its own id: one worker's check must not take the
    bots another worker's test is running for leftovers."""
    import os
    import uuid
    from importlib.metadata import entry_points

    os.environ.setdefault("ARENA_INSTANCE", f"pytest-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    worker = getattr(config, "workerinput", {}).get("workerid")
    if worker:
        os.environ["ARENA_INSTANCE"] = f"{os.environ['ARENA_INSTANCE']}-{worker}"
    _activate_the_venv()

    names = {ep.name for ep in entry_points(group="arena")}
    missing = {"plugins.revised", "bots.greedy"} - names
    if missing:
        pytest.exit(f"the built-in plugins {sorted(missing)} are not installed: run `pip install -e '.[test]'` "
                    f"(or `pip install '.[test]'`) in the project folder first", returncode=4)


#: Modules whose tests must all run on one xdist worker although no fixture of theirs says
#: so, with the reason.
ONE_WORKER = {
    # its first test starts a pool that runs the commands of every page the session selected
    # (two at a time); a second worker would start them all again
    "tests/test_docs_commands.py": "docs-commands",
}


def _explicit_marks(config) -> bool:
    """Whether ``-m`` was given (on the command line or in ``PYTEST_ADDOPTS``): ``-m ""``
    selects everything, which ``config.option.markexpr`` cannot tell from no ``-m``."""
    import os
    import shlex

    args = [str(a) for a in config.invocation_params.args] + shlex.split(os.environ.get("PYTEST_ADDOPTS", ""))
    return any(a == "-m" or (a.startswith("-m") and not a.startswith("--")) for a in args)


def _shares_a_fixture(item) -> bool:
    """Whether the test uses a fixture built once per class, module or package: the tests
    that share it run on one worker, so it is built once, not once per worker."""
    info = getattr(item, "_fixtureinfo", None)
    for name in getattr(item, "fixturenames", ()):
        defs = info.name2fixturedefs.get(name) if info else None
        if defs and defs[-1].scope in ("class", "module", "package"):
            return True
    return False


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Keep the tests that share a fixture (and those of :data:`ONE_WORKER`) on one xdist
    worker (``--dist loadgroup``); and, when the run names no test and no ``-m`` (``python -m
    pytest`` as the README has it), leave the tests marked slow out: ``-m slow`` runs them,
    ``-m ""`` runs everything, and naming a file runs all of it."""
    for item in items:
        path = item.nodeid.split("::", 1)[0]
        if path in ONE_WORKER:
            item.add_marker(pytest.mark.xdist_group(ONE_WORKER[path]))
        elif _shares_a_fixture(item):
            item.add_marker(pytest.mark.xdist_group(path))
    if config.args_source == pytest.Config.ArgsSource.TESTPATHS and not _explicit_marks(config):
        fast = [item for item in items if item.get_closest_marker("slow") is None]
        if len(fast) < len(items):
            config.hook.pytest_deselected(items=[item for item in items if item.get_closest_marker("slow")])
            items[:] = fast


def _activate_the_venv() -> None:
    """A suite started by a virtual environment's interpreter that is not activated
    (``../venv/bin/python -m pytest``) runs as the activated one would: the environment's
    commands folder first on the ``PATH``. The tests start its commands by name (``dask
    scheduler``, ``arena serve`` in a compose file's shell line, a bot's ``python3`` that
    imports the SDK), as a user of the environment types them. Nothing changes for an
    activated environment, nor for an interpreter that is not a virtual environment's."""
    import os
    import sys

    if sys.prefix == sys.base_prefix:
        return
    scripts = os.path.dirname(os.path.abspath(sys.executable))  # abspath: no ".." left in it
    path = os.environ.get("PATH", os.defpath)
    if scripts not in {os.path.abspath(p) for p in path.split(os.pathsep) if p}:
        os.environ["PATH"] = scripts + os.pathsep + path


@pytest.fixture
def new_game():
    """``new_game(players=2, seed=0, variants=(), deal=None, **params)`` -> Game."""

    def make(players=2, seed=0, variants=(), deal=None, **params):
        return Game.new(RuleSpec.make(variants, params), players, seed, deal)

    return make


def play_out(game, policies, seed=0, limit=100_000):
    """Play ``game`` to the end with in-process ``policies`` (one per seat)."""
    rng = random.Random(seed)
    for _ in range(limit):
        if game.is_over:
            return game
        s = game.to_move()
        game.apply(policies[s].choose(game, rng))
    raise AssertionError("game did not end")


def dealt(players=2, white=SMALL_WHITES, black=FIVE_BLACKS, seed=0, **params) -> Game:
    """A base game with an explicit deal (both decks top first) and parameter overrides."""
    return Game.new(RuleSpec.make((), params), players, seed, {"white": list(white), "black": list(black)})


def act(game, obj: dict) -> None:
    """Apply an action given as R14 JSON."""
    game.apply(action_from_json(game.rules, obj))


def place(game, puzzle: str, piece: str, cells) -> None:
    """Apply a ``place`` action."""
    act(game, {"type": "place", "puzzle": puzzle, "piece": piece, "cells": cells})


def take(game, color: str, slot: int) -> None:
    """Apply a ``take_puzzle`` action."""
    act(game, {"type": "take_puzzle", "color": color, "slot": slot})


def pass_turn(game) -> None:
    """Apply ``pass``: the seat to move ends its turn."""
    act(game, {"type": "pass"})


def pass_until_seat(game, seat: int) -> None:
    """Everyone passes until ``seat`` is to move (at the start of its turn)."""
    for _ in range(100):
        if game.to_move() == seat:
            return
        pass_turn(game)
    raise AssertionError(f"seat {seat} never came to move")


def shape(game, name: str) -> int:
    """Index of the shape called ``name``."""
    return game.rules.shape_index[name]


def supply(game, seat: int) -> dict[str, int]:
    """A seat's supply as ``{shape name: count}`` (zero counts left out)."""
    return {game.rules.shapes[i].name: n for i, n in enumerate(game.players[seat].supply) if n}


def reserve(game, name: str) -> int:
    """How many ``name`` pieces the reserve holds."""
    return game.reserve[shape(game, name)]


def give_pieces(game, seat: int, pieces: dict[str, int]) -> None:
    """Set-up helper, through the public attributes: move pieces from the reserve to a
    seat's supply (``{"L4": 2}``). Pieces stay conserved."""
    for name, n in pieces.items():
        s = shape(game, name)
        assert game.reserve[s] >= n, f"the reserve has only {game.reserve[s]} {name}"
        game.reserve[s] -= n
        game.players[seat].supply[s] += n


def set_reserve(game, pieces: dict[str, int]) -> None:
    """Set-up helper, through the public attributes: set reserve counts directly
    (``{"I2": 0}``). This does not conserve pieces; use it only to test stock rules."""
    for name, n in pieces.items():
        game.reserve[shape(game, name)] = n


def rejects(game, action, rule: str) -> IllegalAction:
    """Assert that ``action`` (a compact action or R14 JSON) is rejected citing ``rule``
    (a rule number, or a regex such as ``R3\\.[56]``) and leaves the state exactly equal."""
    before = game.to_json()
    with pytest.raises(IllegalAction) as info:
        game.apply(action_from_json(game.rules, action) if isinstance(action, dict) else action)
    message = str(info.value)
    assert re.match(rf"({rule}): \S", message), f"{message!r} does not cite {rule}"
    assert game.to_json() == before, "a rejected action changed the state"
    return info.value


def start_finish(game) -> None:
    """Pass every turn until the finishing touches begin (the end must be reachable)."""
    for _ in range(10_000):
        if game.phase_name != "action":
            return
        pass_turn(game)
    raise AssertionError("the finishing touches never began")


def is_listed(game, action) -> bool:
    """Whether ``action`` is in ``game.legal_actions()``, comparing the type too: action
    tuples of different types with equal fields compare equal (``TakePiece() == Pass()``)."""
    return any(type(a) is type(action) and a == action for a in game.legal_actions())


def set_player(game, seat: int, completed=(), finish_pieces: int = 0, supply_counts=None, locked: int = 0) -> None:
    """Set-up helper, through the public attributes, for scoring and ranking tests: a seat's
    completed pile (card ids), finishing-touch pieces, supply (``{name: count}``, replacing
    it) and pieces locked on puzzles completed in the finishing touches. Pieces and cards
    are not conserved; use it only where the ranking or the score is the point."""
    p = game.players[seat]
    p.completed = [game.rules.puzzle_index[c] for c in completed]
    p.finish_pieces = finish_pieces
    p.locked = locked
    if supply_counts is not None:
        p.supply = [0] * len(game.rules.shapes)
        for name, n in supply_counts.items():
            p.supply[shape(game, name)] = n
