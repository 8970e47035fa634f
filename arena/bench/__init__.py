"""Benchmarks that measure and return figures (``arena bench ...`` prints them).

Owns :mod:`.engine` (decisions per second, listing time), :mod:`.protocol` (round trips
through the pipe) and :mod:`.tournament` (games per second of the runner, against bare
processes). A benchmark measures; it asserts nothing (tests do).

May import: everything below the CLI.
"""
