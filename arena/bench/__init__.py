"""Benchmarks that measure and return figures (``arena bench ...`` prints them).

Owns :mod:`.engine` (decisions per second, listing time), :mod:`.protocol` (round trips
through the pipe), :mod:`.tournament` (games per second of the runner at each worker
count, against bare processes, and on Dask; where a bot-process game's CPU goes), :mod:`.schedule` (fields of thousands), :mod:`.experiment` (games
per core of an experiment, and its bot processes against a tournament's) and :mod:`.serve`
with :mod:`.serve_load` (a league website's requests per second and latency under load, for
the light pages and for what visitors fetch). A benchmark measures; it asserts nothing (tests do).

May import: everything below the CLI.
"""
