"""Examples of learning with the environments of :mod:`arena.rl` (numpy only)."""
