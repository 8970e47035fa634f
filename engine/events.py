"""Public events: what each seat may learn of the others' actions.

The protocol sends every seat the events since its previous request, so a bot can follow
the game without an engine of its own. An event is ``{"seat": s, "action": <R14 JSON>}``
(or ``{"seat": s, "forfeit": true}``). A rule set may hide parts of an event from other
seats through ``Ruleset.event_filter``; the finishing touches of other seats are never
shown before the game is over (R6.1).
"""

from __future__ import annotations

from .actions import Finish
from .codec import to_json


def events_since(game, viewer: int, start: int, encoded: list | None = None) -> tuple[list[dict], int]:
    """Events of ``game.history[start:]`` as ``viewer`` may see them, and the next start.

    ``encoded``, a list the caller keeps for the game (the referee tells every seat every
    action), holds each action's JSON once made: the seats' events then share it, so the
    caller must not change the events it gets (the referee encodes them at once). A rule
    set with an event filter gets JSON of its own for every event."""
    rules = game.rules
    out = []
    history = game.history
    end = len(history)
    hide_finish = not game.is_over
    filt = rules.event_filter
    shared = encoded if filt is None else None
    if shared is not None:
        while len(shared) < end:
            seat, action = history[len(shared)]
            shared.append(None if action is None else to_json(rules, action))
    for i in range(start, end):
        seat, action = history[i]
        if action is None:
            out.append({"seat": seat, "forfeit": True})
            continue
        if seat != viewer and hide_finish and type(action) is Finish:
            out.append({"seat": seat, "action": {"type": "finish", "hidden": True}})
            continue
        if shared is not None:
            out.append({"seat": seat, "action": shared[i]})
            continue
        event = {"seat": seat, "action": to_json(rules, action)}
        if filt is not None and seat != viewer:
            event = filt(game, viewer, event)
            if event is None:
                continue
        out.append(event)
    return out, end
