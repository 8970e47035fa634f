"""Sweeps: one rule set per combination of parameter values (a grid), named by its values.

``sweep:`` in an experiment file maps rule parameters -- and ``variants`` -- to a list of
values or a range ``{from, to, step}``::

    sweep:
      actions_per_turn: [2, 3, 4]
      reserve_per_shape: {from: 6, to: 14, step: 2}

Every cell of the grid is the first rule set (the reference; the base rules when the file
has no ``rule_sets``) with the swept values put in, named ``actions_per_turn=2,reserve_per_shape=6``.
A cell whose rules equal a rule set of the file is that rule set, not played twice. Each
value is checked once against the parameter's own validation, then each cell is compiled,
so a grid of hundreds of cells validates in well under a second; an error names the file,
line and field of the value at fault.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from engine import EngineError, RuleSpec, compile_rules

from ..tournament.yamlsource import Source

#: more cells than this is refused: a typo in a range, not an experiment
MAX_CELLS = 10_000
RANGE_KEYS = ("from", "to", "step")


@dataclass(frozen=True)
class Axis:
    """One swept parameter (or ``variants``) and its values in order."""

    name: str
    values: tuple
    #: the ``{from, to, step}`` the values were written as, if a range (as pairs: hashable)
    written: tuple = ()


def _label(value) -> str:
    if isinstance(value, (list, tuple)):
        return "+".join(map(str, value)) or "base"
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


def cell_name(values: tuple) -> str:
    """A cell's rule-set name: ``param=value`` pairs joined by commas."""
    return ",".join(f"{k}={_label(v)}" for k, v in values)


def _range(src: Source, path: tuple, spec: dict) -> list:
    for key in spec:
        if key not in RANGE_KEYS:
            raise src.error(path + (key,), f"unknown key of a range (known keys: {', '.join(RANGE_KEYS)})")
    for key in ("from", "to"):
        if key not in spec:
            raise src.error(path, f"a range needs '{key}' (and optionally 'step'), e.g. {{from: 6, to: 14, step: 2}}")
    lo, hi, step = spec["from"], spec["to"], spec.get("step", 1)
    for key, v in (("from", lo), ("to", hi), ("step", step)):
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise src.error(path + (key,), f"expected a number, got {v!r}")
    if step <= 0:
        raise src.error(path + ("step",), f"the step must be positive, got {step!r}")
    if hi < lo:
        raise src.error(path + ("to",), f"the range ends ({hi!r}) before it starts ({lo!r})")
    count = int((hi - lo) / step + 1e-9) + 1
    if count > MAX_CELLS:
        raise src.error(path, f"the range has {count:,} values, more than {MAX_CELLS:,}")
    whole = all(isinstance(v, int) for v in (lo, hi, step))
    return [lo + i * step if whole else round(lo + i * step, 10) for i in range(count)]


def _variants_value(src: Source, path: tuple, item) -> tuple:
    if isinstance(item, str):
        item = [v for v in item.replace(",", "+").split("+") if v]
    if not isinstance(item, list) or not all(isinstance(v, str) for v in item):
        raise src.error(path, "each value of 'variants' is a list of variant names, e.g. [revised, ghost]")
    return tuple(item)


def parse_axes(src: Source, value) -> list[Axis]:
    """The swept axes in file order; the values are checked for shape here, for meaning by
    :func:`build_cells`."""
    if not isinstance(value, dict) or not value:
        raise src.error(("sweep",), "expected a mapping of parameter names to a list of values or a range "
                                    "{from, to, step}, e.g. actions_per_turn: [2, 3, 4]")
    axes = []
    for name, spec in value.items():
        path = ("sweep", name)
        if isinstance(spec, dict):
            if name == "variants":
                raise src.error(path, "'variants' takes a list of variant lists, e.g. [[revised], [revised, ghost]]")
            values, written = _range(src, path, spec), tuple(spec.items())
        elif isinstance(spec, list) and spec:
            written = ()
            values = [_variants_value(src, path + (i,), v) for i, v in enumerate(spec)] if name == "variants" else spec
        else:
            raise src.error(path, "expected a non-empty list of values or a range {from, to, step}")
        if len(set(map(repr, values))) != len(values):
            raise src.error(path, "a value is listed twice")
        axes.append(Axis(str(name), tuple(values), written))
    total = 1
    for a in axes:
        total *= len(a.values)
    if total > MAX_CELLS:
        raise src.error(("sweep",), f"the grid has {total:,} cells, more than {MAX_CELLS:,}")
    return axes


def _known_params(variants, seats: int) -> list[str]:
    from engine.rules import BASE_PARAM_SPECS
    from engine.variants import available

    names = [p.name for p in BASE_PARAM_SPECS]
    known = available()
    for v in variants:
        if v in known:
            names += [p.name for p in known[v].params]
    return names


def build_cells(src: Source, axes: list[Axis], base: RuleSpec, seats: int) -> list[tuple[tuple, RuleSpec]]:
    """Every cell of the grid as ``(values, spec)``, in grid order (the last axis fastest).

    Each value is validated once by compiling the base rules with it alone (the error names
    that value's field); then each cell is compiled, so a combination that cannot be played
    is refused naming the cell.
    """
    swept_variants = next((a.values for a in axes if a.name == "variants"), None)
    all_variants = set(base.variants) | {v for vs in (swept_variants or ()) for v in vs}
    known = set(_known_params(all_variants, seats))
    plural = f"with {seats} seat{'s' if seats != 1 else ''}"
    for a in axes:
        if a.name == "variants":
            for i, vs in enumerate(a.values):
                try:
                    compile_rules(RuleSpec.make(vs, base.param_dict), seats)
                except EngineError as exc:
                    raise src.error(("sweep", "variants", i), f"{exc} ({plural})") from None
            continue
        if a.name not in known:
            close = min(known, key=lambda k: _distance(k, a.name))
            hint = f"did you mean {close!r}? " if _distance(close, a.name) <= max(2, len(a.name) // 3) else ""
            raise src.error(("sweep", a.name), f"unknown rule parameter {a.name!r} ({hint}`arena variants` lists "
                                               f"the parameters of the variants in use)")
        variants = base.variants if swept_variants is None else swept_variants[0]
        for i, v in enumerate(a.values):
            try:
                compile_rules(RuleSpec.make(variants, {**base.param_dict, a.name: v}), seats)
            except EngineError as exc:
                raise _value_error(src, a, i, exc, plural) from None
    cells = []
    for combo in itertools.product(*(a.values for a in axes)):
        values = tuple(zip((a.name for a in axes), combo))
        variants = base.variants
        params = base.param_dict
        for k, v in values:
            if k == "variants":
                variants = v
            else:
                params[k] = v
        spec = RuleSpec.make(variants, params)
        try:
            compile_rules(spec, seats)
        except EngineError as exc:
            raise src.error(("sweep",), f"the cell {cell_name(values)} cannot be played: {exc} ({plural})") from None
        cells.append((values, spec))
    return cells


def _value_error(src: Source, axis: Axis, i: int, exc: EngineError, plural: str):
    """The error of a swept value the rules refuse: a range's value is blamed on the field of
    the range that made it a fraction (its ``step``, ``from`` or ``to``), which the user wrote."""
    written = dict(axis.written)
    fraction = next((k for k in ("step", "from", "to") if isinstance(written.get(k, 1), float)
                     and not float(written.get(k, 1)).is_integer()), None)
    if fraction is None:
        return src.error(("sweep", axis.name, i), f"{exc} ({plural})")
    return src.error(("sweep", axis.name, fraction),
                     f"{fraction} {written[fraction]!r} makes the value {axis.values[i]!r}, which the rules refuse: "
                     f"{exc} ({plural})")


def _distance(a: str, b: str) -> int:
    """Edit distance, to suggest the parameter a typo meant."""
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]
