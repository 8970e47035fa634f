"""Rules from the command line: ``--rules revised,ghost --param actions_per_turn=4``."""

from __future__ import annotations

import yaml

from engine import RuleSpec

from ..errors import UsageError


def parse_param(text: str) -> tuple[str, object]:
    """``NAME=VALUE``; the value is read as YAML (``4``, ``true``, ``[O1, I2]``)."""
    if "=" not in text:
        raise UsageError(f"--param {text!r}: expected NAME=VALUE, e.g. actions_per_turn=4")
    name, _, raw = text.partition("=")
    name = name.strip()
    if not name:
        raise UsageError(f"--param {text!r}: the parameter name is empty")
    try:
        value = yaml.safe_load(raw)
    except yaml.YAMLError:
        raise UsageError(f"--param {text!r}: cannot read the value {raw!r}") from None
    return name, value


def parse_rules(rules: str, params: list[str]) -> RuleSpec:
    """A :class:`RuleSpec` from ``--rules`` and ``--param`` options."""
    variants = [v.strip() for v in rules.split(",") if v.strip()]
    return RuleSpec.make(variants, dict(parse_param(p) for p in params))
