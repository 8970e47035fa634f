"""Variants: the plugin manager for rule hooks, and the variant registry.

Every variant, built-in or third-party, is a plugin published under the ``arena``
entry-point group (the built-in ones by this project's own ``pyproject.toml``), so the
engine names none of them; all register through the same hooks (:mod:`engine.hookspecs`). The host (``arena``) adds its own hook
specifications to the same manager (:func:`plugin_manager`).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

import pluggy

from . import hookspecs
from .errors import ParameterError

PROJECT = "arena"


@dataclass(frozen=True)
class Variant:
    """A rule variant: its name, description, parameters and compatibility.

    ``params`` are :class:`engine.rules.ParamSpec` of the variant's own parameters
    (named ``variant.param`` or plain names); ``overrides`` change base defaults (solo's
    ``reserve_per_shape`` = 15); ``incompatible`` names variants it cannot be combined
    with; ``requires`` names variants it needs; variants are configured in order of
    ``priority`` (then as listed), so one that must see the others' changes (open scores
    after revised) sets a higher priority; ``players`` replaces the base game's 2-4 seats
    (solo: ``(1, 1)``).
    """

    name: str
    description: str
    params: tuple = ()
    overrides: dict = field(default_factory=dict)
    incompatible: tuple[str, ...] = ()
    requires: tuple[str, ...] = ()
    priority: int = 0
    players: tuple[int, int] | None = None
    plugin: Any = None


_PM: pluggy.PluginManager | None = None
_READY = False  # set once the entry points are loaded: until then other threads wait
_LOCK = threading.RLock()  # re-entrant: a plugin may ask for the manager while it loads
_VARIANTS: dict[str, Variant] = {}


def plugin_manager() -> pluggy.PluginManager:
    """The one plugin manager of the project (created and loaded on first use, by one
    thread: the threads of a Dask worker may ask at once)."""
    global _PM, _READY
    if _READY:
        return _PM
    with _LOCK:
        if _PM is None:
            pm = pluggy.PluginManager(PROJECT)
            pm.add_hookspecs(hookspecs)
            _PM = pm
            try:
                pm.load_setuptools_entrypoints(PROJECT)
                _collect(pm)
            except BaseException:
                _PM = None
                raise
            _READY = True
        return _PM


def _collect(pm: pluggy.PluginManager) -> None:
    _VARIANTS.clear()
    for plugin in pm.get_plugins():
        impl = getattr(plugin, "arena_rules_variants", None)
        if impl is None:
            continue

        def register(variant: Variant, _plugin=plugin) -> None:
            if not isinstance(variant, Variant):
                raise ParameterError(f"plugin {pm.get_name(_plugin)} registered {variant!r}, not a Variant")
            if variant.name in _VARIANTS:
                raise ParameterError(f"variant {variant.name!r} is registered twice "
                                     f"({pm.get_name(_VARIANTS[variant.name].plugin)} and {pm.get_name(_plugin)})")
            _VARIANTS[variant.name] = Variant(**{**variant.__dict__, "plugin": _plugin})

        impl(register=register)


def available() -> dict[str, Variant]:
    """Every registered variant by name."""
    plugin_manager()
    return dict(_VARIANTS)


def resolve(names) -> list[Variant]:
    """The variants ``names``, checked for existence, duplicates and compatibility (the
    base game, no names, loads no plugin: a bot process that plays it starts faster)."""
    if not names:
        return []
    known = available()
    out = []
    for name in names:
        if name not in known:
            listing = ", ".join(sorted(known)) or "none installed; `pip install .` installs the built-in ones"
            raise ParameterError(f"R8: unknown variant {name!r} (variants: {listing})")
        if any(v.name == name for v in out):
            raise ParameterError(f"R8: variant {name!r} is named twice")
        out.append(known[name])
    chosen = {v.name for v in out}
    for v in out:
        for other in v.incompatible:
            if other in chosen:
                raise ParameterError(f"R8: variant {v.name!r} cannot be combined with {other!r}")
        for need in v.requires:
            if need not in chosen:
                raise ParameterError(f"R8: variant {v.name!r} needs variant {need!r}")
    return out


def param_specs(variant: Variant):
    return variant.params


def default_overrides(variant: Variant) -> dict:
    return dict(variant.overrides)


def card_sets(variant: Variant, params: dict | None = None) -> list[str]:
    impl = getattr(variant.plugin, "arena_rules_card_sets", None)
    if impl is None:
        return []
    return list(impl(variant=variant.name, ruleset_params=params or {}) or [])


def configure(variant: Variant, ruleset) -> None:
    impl = getattr(variant.plugin, "arena_rules_configure", None)
    if impl is not None:
        impl(variant=variant.name, ruleset=ruleset)
