"""``planner``: a strong reference bot — a puzzle solver, a plan per puzzle, and a beam
search over the actions of the turn, within the time it is given.

How it plays
------------
1. **Puzzle solver** (:mod:`bots.planner.solver`). For every unfinished puzzle it knows
   whether its supply completes it now and with which placements (exact cover of the
   empty recess, fewest pieces first), and otherwise which multisets of pieces would
   complete it and how many actions (exchanges, upgrades, level-1 takes) its supply needs
   to reach the cheapest of them. Both are memoised per empty mask, so per card and filled
   state, and shared by all games.
2. **Evaluation** (:mod:`bots.planner.evaluate`). A position is worth its completed
   points, plus its capital (supply cells, worth less as the end approaches), plus, for
   every unfinished puzzle planned in turn against the shared supply, the puzzle's points
   and reward minus the actions its plan still needs, if the plan fits in the actions the
   game has left; if not, what the finishing touches can make of it, or the unfinished
   penalty of rules that have one (R9.5, R12.5). The horizon is exact after the end is
   triggered (R5.2) and estimated from the black deck before. Every turn the game still
   lasts costs a little (the others score in it too), so it closes out games it leads.
   A card that enters its hand during the search (a blind take, a refilled slot) is a
   sample of the unseen cards and is valued as their average.
3. **Turn search** (:mod:`bots.planner.search`). Candidate actions are every take,
   upgrade and exchange, the level-1 take, placements that follow a puzzle's plan, master
   actions built from the plans of several puzzles (so it uses the master action when it
   advances two puzzles or more), variant actions of any type (simulated, never
   special-cased), and pass. A beam search plays the rest of the turn on clones and keeps
   the first action of the best line; decisions met on the way (reward choice, level-up)
   are searched the same way. It widens the beam while its clock allows (iterative
   widening), and answers with the best line found when time is short.
   **Solo** (R12): the automaton's reply is part of every line that ends the turn (it is
   deterministic; only the refills are sampled), so the planner looks one own turn
   further: the best ends of this turn (:func:`~bots.planner.search.turn_ends`) are each
   followed by a beam search of the next turn, widened while the budget lasts (every end
   keeps the best line found for it at any width, so a sweep the budget cuts short still
   counts for the ends it reached), and the first action of the best two-turn line is
   played. A search whose beam dropped no line is not repeated wider.
4. **Finishing touches**: every order of the unfinished puzzles is tried, and a puzzle is
   completed when its points (doubled when unfinished puzzles cost their points) outweigh
   the pieces it costs (R6).

It never reads what its seat may not see: before searching it replaces the decks with a
random order of the cards it has not seen (it reads only deck lengths), and it ignores
opponents' hidden completed piles. It works on a game rebuilt from an observation.

Time: ``PlannerPolicy(move_ms=...)`` (default 1000 ms per decision); it reads
``time.perf_counter()`` and stops searching at ``safety`` (60%) of its budget. Or a
deterministic budget: ``PlannerPolicy(nodes=N)`` stops after ``N`` positions and never
reads the clock, so its moves do not depend on the machine or its load (``planner-fast``,
:mod:`bots.planner.fast`, is one such setting; ``docs/bots.md``). Its evaluation
constants are :class:`Weights` (``PlannerPolicy(weights=Weights(tempo=1))``).

Strength (``python -m bots.planner_eval``: paired, seat-rotated games against ``greedy``,
in-process, 2 workers on a shared 2-core machine; 95% Wilson intervals; the solo rows
without a mark on seeds 21501-21800, not used in tuning, see ``docs/bots.md``; rows marked
* were measured before the solo lookahead and lock term):

=====================================  =====  ==========================  ===========
rules, seats, clock                    games  planner wins                margin
=====================================  =====  ==========================  ===========
revised, 2 seats, 1 s                  50     92% (81-97%), rank 1.08     +3.3 ± 0.7
revised, 2 seats, 100 ms               60     95% (86-98%), rank 1.05     +3.0 ± 0.5
base, 2 seats, 100 ms                  60     87% (76-93%), rank 1.13     +2.4 ± 0.6
revised, 4 seats (3 greedy), 1 s       40     95% (84-99%), rank 1.05     +2.9 ± 0.6
solo challenging, 1 s                  200    60.5% (53.6-67.0%)          +1.2 ± 0.4
solo unbeatable, 1 s                   100    25.0% (17.5-34.3%)          -1.5 ± 0.6
solo challenging / unbeatable, 1 s *   100    29% (21-39%) / 0% (0-4%)    -1.2 / -9.8
solo standard, 1 s *                   30     73% (56-86%)                +2.3 ± 1.0
solo standard / challenging, 100 ms *  30     40% / 10%                   -0.9 / -3.4
=====================================  =====  ==========================  ===========

About 22 decisions per second at 100 ms per move (it stops at 60 ms).

What it does not do (yet): against other players it searches one turn deep (two in solo)
and leaves later turns to the evaluation (no tree search over the opponents' replies or
the deck order); it does not model what the others want (denying them a puzzle); its
constants were tuned against ``greedy`` under ``revised`` and may suit other opponents
less.
"""

from __future__ import annotations

from arena.hookspecs import hookimpl

from ..policy import register_policy

__all__ = ["PlannerPolicy", "Weights", "SAFETY"]

#: what :mod:`.policy` (and the evaluation it uses) define, found here as before: imported
#: when first asked for, so that loading the plugins imports no search code
_LAZY = {"PlannerPolicy": "policy", "SAFETY": "policy", "solver_for": "policy", "Weights": "evaluate"}


def __getattr__(name: str):
    """``PlannerPolicy``, ``Weights``, ``SAFETY`` and ``solver_for``, their module imported now."""
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@hookimpl
def arena_register_bots(register) -> None:
    """Register ``planner`` (its search is imported when it plays)."""
    register_policy(register, "bots.planner.policy:PlannerPolicy", __doc__, name="planner")
