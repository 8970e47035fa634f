"""Rule sets: the base parameters (R13), their validation, and the compiled :class:`Ruleset`.

A game is played under a :class:`RuleSpec` — the base rules plus a list of variant names
and parameter overrides, plain data that crosses process boundaries and goes into every
replay. :func:`compile_rules` turns a spec into a :class:`Ruleset`: the card pool, the
placement geometry and the *seams* (action handlers, generators, reward, scoring and
observation hooks) that variants fill in. The core engine calls the seams; it knows no
variant by name. Variants are composed once, when the ruleset is compiled, so the
per-decision hot path pays nothing for the plugin system.
"""

from __future__ import annotations

import copy
from functools import lru_cache
from dataclasses import dataclass
from typing import Any, Callable

from .cards import CardSet, card_set, check_rewards
from .errors import ParameterError
from .geometry import Geometry, geometry_for

#: R13: the base game's parameters and their defaults.
BASE_PARAMS: dict[str, Any] = {
    "actions_per_turn": 3,
    "max_unfinished": 4,
    "row_size": 4,
    "black_deck_size": {2: 12, 3: 14, 4: 16},
    "reserve_per_shape": 10,
    "starting_pieces": ["O1", "I2"],
    "finishing_touch_cost": 1,
    "max_rounds": 100,
    "master_action": True,
}

#: Which player counts the base game supports (R1).
MIN_PLAYERS, MAX_PLAYERS = 2, 4


@dataclass(frozen=True)
class RuleSpec:
    """What rules a game is played under: variant names and parameter overrides.

    Plain data: ``RuleSpec.from_json(spec.to_json()) == spec``.
    """

    variants: tuple[str, ...] = ()
    params: tuple[tuple[str, Any], ...] = ()

    @classmethod
    def make(cls, variants=(), params: dict | None = None) -> "RuleSpec":
        """Build a spec from a list of variant names and a parameter dict."""
        items = tuple(sorted((str(k), _freeze(v)) for k, v in (params or {}).items()))
        return cls(tuple(variants), items)

    @property
    def param_dict(self) -> dict[str, Any]:
        """The overrides as a plain dict."""
        return {k: _thaw(v) for k, v in self.params}

    def to_json(self) -> dict:
        """``{"variants": [...], "params": {...}}``."""
        return {"variants": list(self.variants), "params": jsonable(self.param_dict)}

    @classmethod
    def from_json(cls, obj) -> "RuleSpec":
        """Inverse of :meth:`to_json`; raises :class:`ParameterError` on a bad shape."""
        if obj is None:
            return cls()
        if not isinstance(obj, dict):
            raise ParameterError("rules must be a mapping with 'variants' and 'params'")
        unknown = set(obj) - {"variants", "params"}
        if unknown:
            raise ParameterError(f"rules: unknown field '{sorted(unknown)[0]}' (expected 'variants' and 'params')")
        variants = obj.get("variants") or []
        if isinstance(variants, str):
            variants = [v for v in variants.split(",") if v]
        if not isinstance(variants, list) or not all(isinstance(v, str) for v in variants):
            raise ParameterError("rules: 'variants' must be a list of variant names")
        params = obj.get("params") or {}
        if not isinstance(params, dict):
            raise ParameterError("rules: 'params' must be a mapping of parameter names to values")
        return cls.make(variants, params)

    def label(self) -> str:
        """A short human label: ``base``, ``revised+ghost``, with overrides in brackets."""
        name = "+".join(self.variants) or "base"
        if self.params:
            name += "[" + ",".join(f"{k}={_thaw(v)}" for k, v in self.params) + "]"
        return name


def _freeze(v):
    if isinstance(v, dict):
        return ("__dict__", tuple(sorted((str(k), _freeze(x)) for k, x in v.items())))
    if isinstance(v, (list, tuple)):
        return ("__list__", tuple(_freeze(x) for x in v))
    if isinstance(v, (bool, float)):
        # True == 1 == 1.0 in Python: without a tag, a cached ruleset compiled for 1
        # would be handed out for True, skipping validation.
        return ("__" + type(v).__name__ + "__", v)
    return v


def _thaw(v):
    if isinstance(v, tuple) and len(v) == 2 and v[0] == "__dict__":
        return {k: _thaw(x) for k, x in v[1]}
    if isinstance(v, tuple) and len(v) == 2 and v[0] == "__list__":
        return [_thaw(x) for x in v[1]]
    if isinstance(v, tuple) and len(v) == 2 and v[0] in ("__bool__", "__float__"):
        return v[1]
    return v


def jsonable(v):
    """``v`` with tuples as lists and every mapping key a string (plain JSON data)."""
    if isinstance(v, dict):
        return {str(k): jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [jsonable(x) for x in v]
    return v


@dataclass(frozen=True)
class ParamSpec:
    """One parameter: name, default, a one-line description and a validator.

    The validator gets ``(value, players)`` and returns the normalised value or raises
    :class:`ParameterError` with a sentence.
    """

    name: str
    default: Any
    description: str
    validate: Callable[[Any, int], Any]


def _int_at_least(lo: int, hi: int | None = None):
    def check(name):
        def v(value, players):
            if isinstance(value, bool) or not isinstance(value, int) or value < lo or (hi is not None and value > hi):
                bound = f"from {lo} to {hi}" if hi is not None else f">= {lo}"
                raise ParameterError(f"R13: parameter '{name}' must be a whole number {bound}, got {value!r}")
            return value
        return v
    return check


#: Piece counts are kept in bytes-sized keys by the enumeration caches.
MAX_RESERVE = 255


def _bool(name):
    def v(value, players):
        if not isinstance(value, bool):
            raise ParameterError(f"R13: parameter '{name}' must be true or false, got {value!r}")
        return value
    return v


def _black_deck(value, players):
    if isinstance(value, dict):
        table = {}
        for k, x in value.items():
            try:
                table[int(k)] = x
            except (TypeError, ValueError):
                raise ParameterError(f"R13: parameter 'black_deck_size' keys must be player counts, got {k!r}") from None
        if players not in table:
            raise ParameterError(f"R13: parameter 'black_deck_size' has no entry for {players} players")
        value = table[players]
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ParameterError(f"R13: parameter 'black_deck_size' must be a whole number >= 0, got {value!r}")
    return value


def _starting(value, players):
    if not isinstance(value, list) or not all(isinstance(s, str) for s in value):
        raise ParameterError(f"R13: parameter 'starting_pieces' must be a list of piece names, got {value!r}")
    return list(value)


BASE_PARAM_SPECS: tuple[ParamSpec, ...] = (
    ParamSpec("actions_per_turn", 3, "actions in a turn (R2.1)", _int_at_least(1)("actions_per_turn")),
    ParamSpec("max_unfinished", 4, "most unfinished puzzles a player may hold (R3.1)", _int_at_least(1)("max_unfinished")),
    ParamSpec("row_size", 4, "face-up slots in each row (R1.2)", _int_at_least(1)("row_size")),
    ParamSpec("black_deck_size", {2: 12, 3: 14, 4: 16}, "black puzzles in the deck, per player count (R1.1)", _black_deck),
    ParamSpec("reserve_per_shape", 10, "pieces of each shape in the reserve (R0)",
              _int_at_least(1, MAX_RESERVE)("reserve_per_shape")),
    ParamSpec("starting_pieces", ["O1", "I2"], "pieces each player starts with (R1.3)", _starting),
    ParamSpec("finishing_touch_cost", 1, "points lost per piece placed in the finishing touches (R6.1)", _int_at_least(0)("finishing_touch_cost")),
    ParamSpec("max_rounds", 100, "rounds after which an untriggered game is adjudicated (R5.3)", _int_at_least(1)("max_rounds")),
    ParamSpec("master_action", True, "whether the master action is available (R3.6)", _bool("master_action")),
)


class Ruleset:
    """A compiled rule set: cards, geometry, parameters and the seams variants fill in.

    Seams (each set once, at compile time, by the base rules and then by each variant's
    ``arena_rules_configure(variant=..., ruleset=...)`` hook, see :mod:`engine.hookspecs`):

    - ``handlers``: action class -> ``(phase, apply_fn)``; ``apply_fn(game, action)``
      validates (raising :class:`~engine.errors.IllegalAction`) and then mutates.
    - ``decoders``: JSON ``type`` -> ``fn(rules, obj) -> action``; ``encoders``: action
      class -> ``fn(rules, action) -> dict`` (the compiled ruleset, not a game: see
      :mod:`engine.codec`).
    - ``extra_generators``: ``fn(game, out_list)`` adding variant actions to the legal list
      (a generator may also prune ``out_list`` in place). A generator that never adds or
      removes a placement may say so with ``fn.keeps_places = True``: the action masks of
      :mod:`arena.rl.spaces` then number the placements from the geometry (faster)
      instead of mapping the whole list.
    - ``setup``: ``fn(game, rng, deal)`` deals the game (``deal`` is an explicit deal or
      None, see :mod:`engine.deal`); ``setup_hooks``: ``fn(game, rng)`` run after it.
    - ``reward``: ``fn(game, player, card) -> bool`` gives a completed puzzle's reward;
      False when it opened a decision (the remaining completions wait for it);
      ``take_checks``: ``fn(game, action, card)`` house rules on taking a puzzle: raise
      :class:`~engine.errors.IllegalAction` to forbid it. The engine runs them on *every*
      take -- a row take, a blind take, a grid take, any take a variant adds -- before the
      handler, and leaves the takes they forbid out of ``legal_actions()``; ``card`` is the
      puzzle taken (for a blind take, the top of the deck). A check whose own variant
      already keeps its takes out of the listing says so with ``fn.listed = True``.
    - ``take_cards``: action class -> ``fn(game, action) -> card``: the actions that take a
      puzzle and which card each would take (-1 when it takes none, which the handler then
      refuses). A variant that adds a way of taking a puzzle registers it here, and
      ``take_checks`` then hold for it too.
    - ``action_filters``: ``fn(game, actions) -> actions`` prune the listed legal actions
      (keep them cheap: they run at every listing).
    - ``turn_end_hooks``: ``fn(game)`` after each turn (before the next seat moves).
    - ``end_check``: ``fn(game) -> bool`` replaces the base end-of-round logic when set.
    - ``score_penalties``: ``fn(game, seat) -> int`` subtracted at scoring (R7.1).
    - ``observe_hooks``: ``fn(game, seat, obs)`` edit a seat's observation.
    - ``scores_visible``: whether seats see each other's completed piles and scores (R10).
    - ``rank_key``: ``fn(game, seat, key) -> key`` adjusts the R7.2 ranking key.
    - ``result_hooks``: ``fn(game, result)`` add variant fields to ``Game.result()``.
    - ``restore_hooks``: ``fn(game, obs)`` restore variant state when a bot rebuilds a
      game from its observation (:func:`engine.observation.game_from_observation`).
    - ``event_filter``: ``fn(game, viewer, event) -> event | None`` hides what ``viewer``
      may not see of another seat's action (see :mod:`engine.events`).
    - ``enumerate`` / ``enumerate_master`` / ``enumerate_finish``: legal-action listing.
    - ``decision_options``: phase -> ``fn(game) -> list`` of options of an open decision.
    - ``deck_sizes``: ``(white, black)``, the full decks a deal holds (R1.1): a deal book
      must hold them (:func:`engine.deal.check_full`) unless it is a test book.
    - ``caches``: every memo dict a variant keeps on the ruleset, so that
      :meth:`clear_caches` can empty them.
    """

    def __init__(self, spec: RuleSpec, players: int, sets: list[CardSet], params: dict[str, Any],
                 param_specs: dict[str, ParamSpec]):
        self.spec = spec
        self.players = players
        self.sets = sets
        self.params = params
        self.param_specs = param_specs
        self.shapes = tuple(s for cs in sets for s in cs.shapes)
        self.geometry: Geometry = geometry_for(self.shapes)
        self.puzzles = tuple(p for cs in sets for p in cs.puzzles)
        self.puzzle_index = {p.id: i for i, p in enumerate(self.puzzles)}
        self.shape_index = self.geometry.shape_index
        self.shape_level = [s.level for s in self.shapes]
        self.recess = [p.recess for p in self.puzzles]
        self.points = [p.points for p in self.puzzles]
        self.is_black = [p.color == "black" for p in self.puzzles]
        self.actions_per_turn = params["actions_per_turn"]
        self.max_unfinished = params["max_unfinished"]
        self.row_size = params["row_size"]
        self.master_enabled = params["master_action"]
        self.finishing_touch_cost = params["finishing_touch_cost"]
        self.max_rounds = params["max_rounds"]
        self.handlers: dict[type, tuple[int, Callable]] = {}
        self.decoders: dict[str, Callable] = {}
        self.encoders: dict[type, Callable] = {}
        self.extra_generators: list[Callable] = []
        self.setup: Callable | None = None
        self.setup_hooks: list[Callable] = []
        self.reward: Callable | None = None
        self.take_checks: list[Callable] = []
        self.take_cards: dict[type, Callable] = {}
        # the full decks a deal holds (R1.1): every white puzzle, black_deck_size blacks
        self.deck_sizes = (sum(1 for p in self.puzzles if p.color == "white"), params["black_deck_size"])
        self.action_filters: list[Callable] = []
        self.turn_end_hooks: list[Callable] = []
        self.end_check: Callable | None = None
        self.score_penalties: list[Callable] = []
        self.observe_hooks: list[Callable] = []
        self.scores_visible = True
        self.rank_key: Callable | None = None
        self.event_filter: Callable | None = None
        self.restore_hooks: list[Callable] = []
        self.result_hooks: list[Callable] = []
        self.enumerate: Callable = None  # type: ignore[assignment]
        self.enumerate_master: Callable = None  # type: ignore[assignment]
        self.enumerate_finish: Callable = None  # type: ignore[assignment]
        self.decision_options: dict[int, Callable] = {}
        self.upgrade_max_level = 4
        self.min_players, self.max_players = MIN_PLAYERS, MAX_PLAYERS
        self.reserve_shapes = list(range(len(self.shapes)))
        self.extra_state: dict[str, Any] = {}
        self.caches: list[dict] = []

    def clear_caches(self) -> None:
        """Empty every enumeration cache (for benchmarks; the caches only speed things up)."""
        for cache in self.caches:
            cache.clear()


@lru_cache(maxsize=128)
def compile_rules(spec: RuleSpec, players: int) -> Ruleset:
    """Validate ``spec`` for ``players`` seats and compose the base rules with its variants.

    Raises :class:`ParameterError` for an unknown variant or parameter, an impossible
    value, or a player count the rules do not support. Compiled rulesets are cached: a
    ruleset holds no game state, so every game under the same rules shares one.
    """
    from . import base_rules, variants  # late: variants import the core

    plugins = variants.resolve(spec.variants)
    specs = {p.name: p for p in BASE_PARAM_SPECS}
    for plugin in plugins:
        for p in variants.param_specs(plugin):
            specs[p.name] = p
    overrides = spec.param_dict
    for name in overrides:
        if name not in specs:
            known = ", ".join(sorted(specs))
            raise ParameterError(f"R13: unknown parameter '{name}' for rules {spec.label()} (known: {known})")
    raw = {name: copy.deepcopy(p.default) for name, p in specs.items()}
    for plugin in plugins:
        raw.update(variants.default_overrides(plugin))
    raw.update(overrides)
    if isinstance(players, bool) or not isinstance(players, int):
        raise ParameterError(f"R1: the number of players must be a whole number, got {players!r}")
    lo, hi = MIN_PLAYERS, MAX_PLAYERS
    for plugin in plugins:
        if plugin.players is not None:
            lo, hi = plugin.players
    if not lo <= players <= hi:
        raise ParameterError(f"R1: rules {spec.label()} are for {lo}-{hi} players, not {players}")
    params = {name: specs[name].validate(value, players) for name, value in raw.items()}
    sets = [card_set("base")]
    for plugin in plugins:
        for name in variants.card_sets(plugin, params):
            sets.append(card_set(name))
    check_rewards(sets)
    ruleset = Ruleset(spec, players, sets, params, specs)
    base_rules.install(ruleset)
    for plugin in sorted(plugins, key=lambda v: v.priority):
        variants.configure(plugin, ruleset)
    if not ruleset.min_players <= players <= ruleset.max_players:
        raise ParameterError(
            f"R1: rules {spec.label()} are for {ruleset.min_players}-{ruleset.max_players} players, not {players}")
    _check_counts(ruleset)
    base_rules.finalize(ruleset)
    return ruleset


def _check_counts(rs: Ruleset) -> None:
    for name in rs.params["starting_pieces"]:
        if name not in rs.shape_index:
            raise ParameterError(f"R13: parameter 'starting_pieces' names unknown piece {name!r}")
    need: dict[str, int] = {}
    for name in rs.params["starting_pieces"]:
        need[name] = need.get(name, 0) + rs.players
    for name, count in need.items():
        if count > rs.params["reserve_per_shape"]:
            raise ParameterError(
                f"R13: {rs.players} players need {count} {name} to start but reserve_per_shape is {rs.params['reserve_per_shape']}")
    blacks = sum(rs.is_black)
    if rs.params["black_deck_size"] > blacks:
        raise ParameterError(f"R13: parameter 'black_deck_size' is {rs.params['black_deck_size']} but the game has only {blacks} black puzzles")
