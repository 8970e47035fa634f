"""Variant resolution (filled in by the plugin system)."""

from __future__ import annotations

from .errors import ParameterError


def resolve(names):
    if names:
        raise ParameterError(f"unknown variant {names[0]!r}")
    return []


def param_specs(plugin):
    return []


def default_overrides(plugin):
    return {}


def card_sets(plugin):
    return []


def configure(plugin, ruleset):
    pass
