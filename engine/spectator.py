"""What a spectator of the table may see: the part of the game every seat sees alike.

A person watching the real table sees the face-up rows, the sizes of the decks (not their
order), the reserve, each seat's supply and puzzles in progress, how many puzzles each
has completed, and who is to move. Under rules that hide scores (R10) nobody but a seat
itself knows its completed pile and its score, so the spectator does not either; the
finishing touches of a seat stay hidden until the game is over (R6.1).

:func:`spectator_observation` is built from :func:`~engine.observation.observation` of
every seat, keeping only what all of them are shown alike: whatever a rule set hides from
one seat (through its observation hooks too) is hidden from the spectator. Nothing here
names the seed or the order of a deck. Once the game is over, every seat sees every
pile, and so does the spectator.
"""

from __future__ import annotations

from .events import events_since
from .observation import observation

#: The spectator's seat number where a seat's number is asked (no seat is the spectator's).
NO_SEAT = -1

_MISSING = object()


def _common(values: list):
    """What ``values`` (the same field of every seat's view) have in common, or ``_MISSING``."""
    first = values[0]
    if all(isinstance(v, dict) for v in values):
        out = {}
        for key in first:
            if all(key in v for v in values):
                common = _common([v[key] for v in values])
                if common is not _MISSING:
                    out[key] = common
        return out
    if all(isinstance(v, list) for v in values) and len({len(v) for v in values}) == 1:
        items = [_common([v[i] for v in values]) for i in range(len(first))]
        return _MISSING if any(i is _MISSING for i in items) else items
    return first if all(type(v) is type(first) and v == first for v in values) else _MISSING


def spectator_observation(game) -> dict:
    """The JSON-ready view of ``game`` for someone at no seat: what every seat's observation
    shows alike (no ``seat`` and no open ``decision``, which are one seat's own)."""
    views = [observation(game, s) for s in range(game.n)]
    for view in views:
        view.pop("seat", None)
        view.pop("decision", None)
    return _common(views) if len(views) > 1 else views[0]


def spectator_events(game, start: int = 0) -> list[dict]:
    """The events of ``game.history[start:]`` as a spectator may see them (every seat's
    finishing touches hidden until the game is over, and whatever a rule set's event filter
    hides from a seat other than the mover)."""
    return events_since(game, NO_SEAT, start)[0]
