"""Benchmarks that measure and return figures (``arena bench ...`` prints them).

Owns :mod:`.engine` (decisions per second, listing time), :mod:`.protocol` (round trips
through the pipe), :mod:`.tournament` (games per second of the runner, against bare
processes, and on Dask), :mod:`.schedule` (fields of thousands), :mod:`.experiment` (games
per core of an experiment, and its bot processes against a tournament's) and :mod:`.serve`
(a league website's requests per second and latency under load). A benchmark measures; it asserts nothing (tests do).

May import: everything below the CLI.
"""
