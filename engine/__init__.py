"""The Project L rules engine: pure, deterministic, no I/O, no knowledge of bots.

Typical use::

    from engine import Game, RuleSpec
    game = Game.new(RuleSpec.make(), players=2, seed=7)
    while not game.is_over:
        action = game.legal_actions()[0]
        game.apply(action)
    print(game.result())

Rules are in ``docs/rules.md`` (numbered R0-R14). Actions are compact tuples
(:mod:`engine.actions`); :mod:`engine.codec` turns them into R14's JSON and back.
:mod:`engine.stats` holds the statistics shared by the host and the bots.

May import: the standard library, pluggy and pyyaml; never ``arena``,
``bots`` or ``plugins`` (variants reach it only through the ``arena`` entry-point group).
"""

from .actions import ACTION, FINISH, LEVEL_UP, OVER, REWARD
from .codec import from_json as action_from_json
from .codec import to_json as action_to_json
from .errors import CardDataError, DealError, EngineError, IllegalAction, ParameterError, ReplayMismatch
from .game import Game
from .observation import observation
from .replay import make_replay, resimulate
from .rules import RuleSpec, compile_rules

__all__ = [
    "ACTION", "FINISH", "LEVEL_UP", "OVER", "REWARD",
    "CardDataError", "DealError", "EngineError", "Game", "IllegalAction", "ParameterError",
    "ReplayMismatch", "RuleSpec", "action_from_json", "action_to_json", "compile_rules", "make_replay",
    "observation", "resimulate",
]
