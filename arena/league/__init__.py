"""Leagues: long-lived Elo ladders in one SQLite file.

A league holds its rules, its entries (bots, each ``name`` or ``name@version``; a new
version is a new entry so the history of the old one stays true) and every game played.
``arena league play`` matches entries with few games and close ratings in seat-rotated
groups (:mod:`arena.league.matchmaking`); ratings are refitted on all games of the league
with the tournament's Bradley-Terry / Plackett-Luce fit (:mod:`arena.league.table`).
See ``docs/leagues.md``.

May import: :mod:`arena.execution` (its games are played through the one seam),
:mod:`arena.tournament` (schedule, ratings, store helpers), :mod:`arena.plugins`, ``engine``
and :mod:`arena.errors`; never the tournament's runner.
"""

from .store import Entry, League, LeagueError

__all__ = ["Entry", "League", "LeagueError"]
