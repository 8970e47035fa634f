"""The protocol's JSON Schema (``protocol.json``), shipped as package data.

:func:`validator` checks one message against the definition of its kind; it is used by
the tests and ``arena check-bot``, never on the referee's hot path.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

SCHEMA_PATH = Path(__file__).with_name("protocol.json")


@lru_cache(maxsize=1)
def protocol_schema() -> dict:
    """The whole schema document."""
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


def validate(message: dict, kind: str) -> list[str]:
    """Messages about what is wrong with ``message`` as a ``kind`` (``ready``, ``reply``, ...); [] if valid."""
    import jsonschema

    schema = protocol_schema()
    sub = {"$schema": schema["$schema"], "$defs": schema["$defs"], "$ref": f"#/$defs/{kind}"}
    validator = jsonschema.Draft202012Validator(sub)
    return [f"{'/'.join(str(p) for p in e.absolute_path) or '(message)'}: {e.message}"
            for e in validator.iter_errors(message)]
