"""The experiment file: a tournament file's bots, seats and seeds, plus ``rule_sets``.

Everything but the experiment's own keys (``rule_sets``, ``description``, ``sweep``,
``until``, ``target``) is validated by the tournament file's own validation
(:func:`arena.tournament.config.validate`), so the fields mean the same and errors name the
same file, line and field. The executor defaults to ``inprocess``: built-in bots play
inside the worker processes, the fast path for experiments at scale. ``sweep:`` adds one
rule set per cell of a grid (:mod:`.sweep`); ``until:`` and ``target:`` play in rounds until
the answer is known (:mod:`.sequential`), their ``max_games`` being each rule set's games.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from engine import EngineError, RuleSpec, compile_rules

from ..tournament.config import MAX_GAMES_PER_CORE, TournamentConfig, max_games, validate
from ..tournament.yamlsource import ConfigError, Source, load_with_lines
from .sequential import StopRule, check_bounds, parse_target, parse_until
from .sweep import build_cells, cell_name, parse_axes

#: Keys of an experiment file that the tournament validation checks.
SHARED_KEYS = ("name", "seats", "bots", "games", "seed", "time_control", "fault_policy", "sandbox",
               "concurrency", "executor", "output", "replays", "deals")
OWN_KEYS = ("rule_sets", "description", "sweep", "until", "target")
RULE_SET_KEYS = ("name", "variants", "params")


@dataclass(frozen=True)
class RuleSet:
    """One rule set of an experiment: a short name (a column of the report) and its spec."""

    name: str
    spec: RuleSpec
    values: tuple = ()  # a sweep's cell: ((parameter, value), ...)


@dataclass(frozen=True)
class ExperimentConfig:
    """A validated experiment: the shared tournament settings and the rule sets to compare.

    ``axes`` are the swept parameters (:mod:`.sweep`) and ``stop`` the sequential rule
    (``until:``) or search (``target:``) of :mod:`.sequential`, if the file has them.
    """

    base: TournamentConfig
    rule_sets: tuple[RuleSet, ...]
    description: str
    axes: tuple = ()
    stop: StopRule | None = None

    @property
    def name(self) -> str:
        """The experiment's name."""
        return self.base.name

    def tournament(self, index: int) -> TournamentConfig:
        """The tournament of rule set ``index``: same bots, seeds and schedule, its own rules."""
        rs = self.rule_sets[index]
        return replace(self.base, name=f"{self.base.name}:{rs.name}", rules=rs.spec,
                       output=self.base.output / rs.name)

    def with_overrides(self, output=None, concurrency=None, games=None, deals=None, dask=None,
                       seats=None) -> "ExperimentConfig":
        """The experiment with command-line overrides (``deals``: a deal book every rule set plays;
        ``dask``: a scheduler's address, the games' executor; ``seats``: players per game, at
        most the number of bots, every rule set checked at that count)."""
        base = self.base.with_overrides(output=output, concurrency=concurrency, deals=deals, dask=dask)
        if seats is not None and seats != base.seats:
            from ..errors import UsageError

            if not 1 <= seats <= len(base.bots):
                raise UsageError(f"--seats {seats}: give 1 to {len(base.bots)} (the file names {len(base.bots)} bots)")
            for rs in self.rule_sets:
                try:
                    compile_rules(rs.spec, seats)
                except EngineError as exc:
                    raise UsageError(f"--seats {seats}: rule set {rs.name!r} cannot be played: {exc}") from None
            base = replace(base, seats=int(seats))
            if self.stop is not None and self.stop.seat >= seats:
                raise UsageError(f"--seats {seats}: the stopping rule measures seat {self.stop.seat}")
        if deals is not None:
            from ..tournament.config import read_book

            for rs in self.rule_sets:
                read_book(deals, rs.spec, base.seats)
        stop = self.stop
        if games is not None:
            base = replace(base, games=int(games), rounds=None)
            if stop is not None:
                stop = replace(stop, max_games=int(games))
        return replace(self, base=base, stop=stop)


def load_experiment(path) -> ExperimentConfig:
    """Read and validate an experiment file; :class:`ConfigError` names file, line and field."""
    src = load_with_lines(path)
    doc = src.value
    if not isinstance(doc, dict):
        raise src.error((), "an experiment file must be a mapping of fields (name, bots, games, rule_sets, ...)")
    for key in doc:
        if key not in SHARED_KEYS and key not in OWN_KEYS:
            raise src.error((key,), f"unknown key (known keys: {', '.join(SHARED_KEYS + OWN_KEYS)})")
    shared = {k: v for k, v in doc.items() if k in SHARED_KEYS}
    shared.setdefault("executor", "inprocess")
    shared["format"] = "round-robin"
    if "until" in doc and "target" in doc:
        raise src.error(("target",), "give 'until' (when each rule set stops) or 'target' (a search), not both")
    stop_key = "until" if "until" in doc else "target" if "target" in doc else None
    if stop_key:  # the cap is the games of each rule set's schedule
        cap = doc[stop_key].get("max_games") if isinstance(doc[stop_key], dict) else None
        if isinstance(cap, int) and not isinstance(cap, bool) and 1 <= cap <= max_games():
            shared["games"] = cap  # a cap beyond what this machine can play is refused naming its own field
        shared.setdefault("games", 1)  # a missing cap is reported by the stopping rule's own check
    if "games" not in shared:
        raise src.error((), "the field 'games' is missing (games per rule set)")
    base = validate(Source(src.path, shared, src.lines))
    description = doc.get("description") or ""
    if not isinstance(description, str):
        raise src.error(("description",), "expected text")
    if "sweep" in doc and doc.get("rule_sets") is None:
        rule_sets = []
    else:
        rule_sets = _rule_sets(src, doc.get("rule_sets"), base.seats)
    axes: list = []
    if "sweep" in doc:
        axes = parse_axes(src, doc["sweep"])
    stop = None
    games = doc.get("games") if isinstance(doc.get("games"), int) else None
    if stop_key == "until":
        stop = parse_until(src, doc["until"], base.seats, games)
    elif stop_key == "target":
        stop = parse_target(src, doc["target"], base.seats, games, axes)
    if stop is not None and stop.max_games > max_games():
        raise src.error((stop_key, "max_games"), f"must be at most {max_games():,} games (what this machine can play: "
                        f"{MAX_GAMES_PER_CORE:,} per core), got {stop.max_games:,}")
    if axes:
        rule_sets = _with_cells(src, rule_sets, axes, base.seats, search=stop_key == "target")
    if stop is not None and stop.against and len(rule_sets) < 2:
        raise src.error(("until", "against"), "a paired difference needs a second rule set to compare with the first")
    if stop is not None:
        check_bounds(src, stop, rule_sets, base.seats)
    if base.deals:
        from ..tournament.config import deal_book

        for rs in rule_sets:  # every deal must be one of every rule set's card pool
            try:
                deal_book(src, doc["deals"], rs.spec, base.seats)
            except ConfigError as exc:
                raise ConfigError(f"{exc} (rule set {rs.name!r})") from None
    return ExperimentConfig(base, tuple(rule_sets), description, tuple(axes), stop)


def _with_cells(src: Source, explicit: list[RuleSet], axes, seats: int, search: bool) -> list[RuleSet]:
    """The rule sets with the sweep's cells: a cell equal to a listed rule set is that rule
    set; the reference (first) is the first listed rule set, else the first cell whose
    parameters are all at their defaults, else the first cell. A search plays the cells alone."""
    base = explicit[0].spec if explicit else RuleSpec()
    cells = build_cells(src, axes, base, seats)
    if search:
        return [RuleSet(cell_name(values), spec, values) for values, spec in cells]

    def rules(spec):  # a parameter given at its default is the same rules
        return spec.variants, sorted(compile_rules(spec, seats).params.items(), key=lambda kv: kv[0])

    out = list(explicit)
    listed = [rules(rs.spec) for rs in out]
    for values, spec in cells:
        same = next((k for k, r in enumerate(listed) if r == rules(spec)), None)
        if same is not None:
            out[same] = replace(out[same], values=values)
        else:
            out.append(RuleSet(cell_name(values), spec, values))
            listed.append(rules(spec))
    if not explicit:
        # the first cell whose parameters are all at their defaults (under its own variants)
        ref = next((k for k, rs in enumerate(out) if listed[k] == rules(RuleSpec.make(rs.spec.variants,
                                                                                      base.param_dict))), 0)
        out.insert(0, out.pop(ref))
    return out


def _rule_sets(src: Source, value, seats: int) -> list[RuleSet]:
    if not isinstance(value, list) or len(value) < 1:
        raise src.error(("rule_sets",), "expected a list of rule sets, each {name, variants, params}")
    out: list[RuleSet] = []
    for i, item in enumerate(value):
        path = ("rule_sets", i)
        if not isinstance(item, dict):
            raise src.error(path, "a rule set is a mapping with 'name', 'variants' and 'params'")
        for key in item:
            if key not in RULE_SET_KEYS:
                raise src.error(path + (key,), f"unknown key (known keys: {', '.join(RULE_SET_KEYS)})")
        name = item.get("name")
        if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.+-]*", name):
            raise src.error(path + ("name",), "every rule set needs a 'name': letters, digits, '.', '_', '+' or '-'")
        if any(r.name == name for r in out):
            raise src.error(path + ("name",), f"two rule sets are named {name!r}")
        variants = item.get("variants") or []
        if isinstance(variants, str):
            variants = [variants]
        if not isinstance(variants, list) or not all(isinstance(v, str) for v in variants):
            raise src.error(path + ("variants",), "expected a list of variant names")
        params = item.get("params") or {}
        if not isinstance(params, dict):
            raise src.error(path + ("params",), "expected a mapping of parameter names to values")
        try:
            spec = RuleSpec.make(variants, params)
            compile_rules(spec, seats)
        except EngineError as exc:
            text = str(exc)
            named = [p for p in params if f"'{p}'" in text or str(p) in text]
            where = path + ("params", named[0]) if named else path + ("variants",) if "variant" in text else path
            raise src.error(where, f"{text} (with {seats} seat{'s' if seats != 1 else ''})") from None
        out.append(RuleSet(name, spec))
    return out


__all__ = ["ConfigError", "ExperimentConfig", "RuleSet", "load_experiment"]
