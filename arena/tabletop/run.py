"""``arena play ... --human``: serve the table, open the browser, play, wait for the person to leave."""

from __future__ import annotations

import getpass
import os
import tempfile
from pathlib import Path

from engine import RuleSpec
from engine.rules import compile_rules

from ..process.protocol import hello_message
from .seat import PersonSeat
from .server import Serving, Table
from .table import person_request, play_with_person

#: How long the page stays served after the game when the person does not press Leave.
STAY_AFTER_S = 600.0


def person_name() -> str:
    """The name in the person's seat (and its replay): the login name."""
    try:
        return getpass.getuser() or "person"
    except (KeyError, OSError):
        return "person"


def card_data(rules_json: dict, players: int) -> dict:
    """The card set's shapes and puzzles, as every bot gets them in ``hello``."""
    spec = RuleSpec.from_json(rules_json)
    return hello_message(0, compile_rules(spec, players), {}, 0)["cards"]


def play_at_table(request: dict, seat: int, port: int = 0, open_browser: bool = True, echo=print,
                  stay_s: float = STAY_AFTER_S) -> dict:
    """Play ``request`` with the person in ``seat`` (their name replaces the seat's), served
    on 127.0.0.1; returns the referee's answer once the person leaves (or ``stay_s`` after
    the game). The replay is always written: to ``replay_path``, or to a temporary file."""
    name = person_name()
    request = person_request(request, seat)
    request["seats"][seat]["name"] = name
    tmp = None
    if not request.get("replay_path"):
        tmp = tempfile.mkdtemp(prefix="arena-table-")
        request["replay_path"] = os.path.join(tmp, "replay.json")
    person = PersonSeat(name)
    names = [s["name"] for s in request["seats"]]
    table = Table(person, seat, names, card_data(request.get("rules") or {}, request["players"]))
    serving = Serving(table, port)
    serving.start()
    echo(f"arena: your table is at {serving.url}")
    if open_browser:
        import webbrowser

        webbrowser.open(serving.url)
    try:
        out = play_with_person(request, seat, person)
        echo(f"arena: the game is over; the page shows the scores and the replay until you leave it "
             f"(Leave on the page, or Ctrl-C)")
        table.left.wait(stay_s)
    finally:
        serving.stop()
    if tmp is not None:
        out["replay_path"] = None
        Path(request["replay_path"]).unlink(missing_ok=True)
        os.rmdir(tmp)
    return out
