"""Tiny ``obs, mask -> index`` policies for the policy-bot tests."""

import numpy as np


def first_legal(obs, mask):
    """The lowest legal index (passes whenever it may)."""
    return int(np.flatnonzero(mask)[0])


def last_legal(obs, mask):
    """The highest legal index (a placement whenever one is legal)."""
    return int(np.flatnonzero(mask)[-1])


def illegal(obs, mask):
    """Always an index the mask forbids (the bot must fall back to a legal one)."""
    return int(np.flatnonzero(mask == 0)[0])


def seeded(seed):
    """A factory: a random legal index from a generator seeded with ``seed``."""
    rng = np.random.default_rng(int(seed))
    return lambda obs, mask: int(rng.choice(np.flatnonzero(mask)))
