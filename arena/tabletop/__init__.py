"""A person at the table: ``arena play BOT... --human``.

One seat of a game is played by a person in a browser; the others are bot processes run
by the referee as in any game (sandbox, clocks, faults). The person's seat is a seat whose
"process" is the web page (:class:`~arena.tabletop.seat.PersonSeat`): it is asked for a
move with the very request a bot of that seat would get (its observation, the events since
its last move, its legal actions) and answers with one item of that legal list. The page
holds no state of its own: it draws what ``GET /api/state`` says and sends what
``POST /api/action`` accepts (:mod:`arena.tabletop.server`); the game is played by
:func:`arena.tabletop.table.play_with_person` and ends as a normal replay with the
person's name in its seat.
"""
