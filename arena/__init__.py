"""The arena: the host that runs Project L games between bots (CLI, bots, tournaments)."""

__version__ = "0.1.0"
