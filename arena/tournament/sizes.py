"""The sizes of a tournament known from its config alone, before any game: the tables of one
cycle, the places and rounds of a knockout's bracket, the most groups a knockout may play.

The config checks its numbers with them and the schedule and the knockout plan build on them;
they take a :class:`~arena.tournament.config.TournamentConfig` (or a bot count) and import
nothing of the tournament, so each of those modules imports them from below.
"""

from __future__ import annotations

import math


def cycle_length(cfg) -> int:
    """How many tables one cycle holds, from a formula (nothing is listed)."""
    bots = len(cfg.bots)
    n = cfg.seats
    if n == 1:
        return bots
    if cfg.format == "swiss":
        return bots // 2  # tables per round
    if cfg.format == "round-robin":
        return math.comb(bots, n)
    if cfg.format == "gauntlet":
        seeds = cfg.format_options.get("seeds", 1)
        return seeds * math.comb(bots - seeds, n - 1)
    return 1


def bracket_size(bots: int) -> int:
    """The places of the bracket: the power of two at or above ``bots``."""
    size = 1
    while size < bots:
        size *= 2
    return size


def rounds_of(bots: int) -> int:
    """How many rounds the bracket of ``bots`` bots has."""
    return max(1, (bracket_size(bots) - 1).bit_length())


def total_groups(cfg) -> int:
    """The most groups a knockout may play (every tie to its last extra pair)."""
    o = cfg.format_options
    return (bracket_size(len(cfg.bots)) - 1) * (o["pairs"] + o["extra_pairs"])
