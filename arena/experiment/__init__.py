"""House-rule experiments: the same seeded deals under several rule sets, compared side by side.

An experiment file (YAML, see ``docs/experiments.md``) names bots, a number of games and a
list of rule sets (variants plus parameters). :func:`run_experiment` plays the tournament
schedule (seat-rotated groups, one deal per group) once under every rule set with the same
seeds, so every comparison is paired, and writes a Markdown report with confidence
intervals, PNG charts and a CSV of per-game rows. Its statistics are
:mod:`engine.stats`, shared with the bots' own evaluation.

A file may also sweep rule parameters over a grid (:mod:`.sweep`), stop each rule set as
soon as its answer is known or search for the values that meet a target
(:mod:`.sequential`, played round by round by :mod:`.plan`), and the report states how
strong the bots are (:mod:`.strength`).

May import: :mod:`arena.execution` (games are played through the one seam, on a cluster
through :mod:`arena.cluster`), :mod:`arena.tournament` (config, schedule, requests; never
its runner), :mod:`arena.referee`, ``engine`` and :mod:`arena.errors`.
"""

from .config import ExperimentConfig, RuleSet, load_experiment
from .play import run_experiment

__all__ = ["ExperimentConfig", "RuleSet", "load_experiment", "run_experiment"]
