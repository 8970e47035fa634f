"""``python -m arena.cli``: the same as the ``arena`` command."""

from . import main

main()
