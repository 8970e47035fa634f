"""The fast paths of arena.rl give what the straightforward ones give: the sampler's
draw is numpy's ``integers(0, k)`` word for word, the mask built from cached runs and
cached action lists is the engine's listing mapped index by index, and the wrapped
PettingZoo env answers ``last()`` and ``agent_iter()`` as PettingZoo's own wrapper does."""

from __future__ import annotations

import copy
import pickle
import random

import numpy as np
import pytest

pytest.importorskip("gymnasium")
pytest.importorskip("pettingzoo")

from gymnasium.spaces import Discrete  # noqa: E402
from pettingzoo.utils.wrappers import OrderEnforcingWrapper  # noqa: E402

from arena.rl import aec  # noqa: E402
from arena.rl.aec import MaskedDiscrete, draw_below, word_source  # noqa: E402
from arena.rl.spaces import Chooser, action_index  # noqa: E402
from engine import Game, RuleSpec, compile_rules  # noqa: E402
from rl_helpers import CONFIGS  # noqa: E402

#: bounds that reject often (k near 2**31 rejects almost half the words), small ones, and
#: the edges where numpy stops using a 32-bit word
BOUNDS = [2, 3, 7, 60, 1744, 2508, 2**31 + 1, 3 * 2**30, 2**32 - 1, 2**32, 2**33 + 5]


@pytest.mark.parametrize("bits", [np.random.PCG64, np.random.MT19937, np.random.Philox, np.random.SFC64])
def test_draw_below_is_integers_word_for_word(bits):
    ours, theirs = np.random.Generator(bits(11)), np.random.Generator(bits(11))
    source = word_source(ours)
    sizes = random.Random(0)
    for i in range(6000):
        k = BOUNDS[i % len(BOUNDS)] if i % 2 else sizes.randrange(2, 5000)
        assert draw_below(source, k) == int(theirs.integers(0, k)), (i, k)
        if i % 7 == 0:  # other draws between ours leave the two generators in step
            assert ours.random() == theirs.random()
            assert ours.integers(0, 9, size=3).tolist() == theirs.integers(0, 9, size=3).tolist()


def test_masked_sampling_follows_discrete_on_the_environments_masks():
    """A whole seeded game sampled by our space and by Gymnasium's: the same indices."""
    e = aec.raw_env(rules="revised", players=3, json_obs=False)
    theirs = Discrete(e.table.action_size)
    for seed in range(3):
        e.reset(seed=seed)
        ours = e.action_space("seat_0")
        ours.seed(seed)
        theirs.seed(seed)
        for agent in e.agent_iter():
            obs, _, term, trunc, _ = e.last()
            if term or trunc:
                e.step(None)
                continue
            a, b = ours.sample(obs["action_mask"]), theirs.sample(obs["action_mask"])
            assert a == b and type(a) is type(b)
            e.step(a)


@pytest.mark.parametrize("start", [0, 5, -3])
def test_masked_sampling_draws_what_discrete_draws_from_any_start(start):
    ours, theirs = MaskedDiscrete(60, start=start), Discrete(60, start=start)
    ours.seed(2)
    theirs.seed(2)
    rng = np.random.default_rng(1)
    for _ in range(2000):
        mask = (rng.random(60) < rng.random() * 0.2).astype(np.int8)
        a, b = ours.sample(mask), theirs.sample(mask)
        assert a == b and type(a) is type(b)


def test_masked_space_pickles_and_copies_and_keeps_drawing_in_step():
    space, twin = MaskedDiscrete(60), Discrete(60)
    space.seed(3)
    twin.seed(3)
    mask = np.zeros(60, np.int8)
    mask[[4, 9, 33, 59]] = 1
    assert space.sample(mask) == twin.sample(mask)  # its word source is made
    for other in (pickle.loads(pickle.dumps(space)), copy.deepcopy(space)):
        state = twin.np_random.bit_generator.state
        assert [other.sample(mask) for _ in range(50)] == [twin.sample(mask) for _ in range(50)]
        twin.np_random.bit_generator.state = state
    old = pickle.loads(pickle.dumps(space))  # as pickled before the space kept its mask shape
    for made_later in ("_mask_shape", "_draw"):
        del old.__dict__[made_later]
    again = pickle.loads(pickle.dumps(old))
    assert again.sample(mask) == twin.sample(mask)


@pytest.mark.parametrize("label,variants,players", CONFIGS)
def test_cached_masks_are_the_listing_mapped_index_by_index(label, variants, players):
    """On random playouts, every single-action mask built from the caches (placement runs,
    action lists by identity) equals the engine's whole listing mapped action by action,
    also once the caches are emptied in the middle of a game."""
    rules = compile_rules(RuleSpec.make(variants), players)
    space = action_index(rules)
    rng = random.Random(5)
    checked = 0
    for seed in range(3):
        game = Game.new(rules, players, seed)
        while not game.is_over and checked < 400 * (seed + 1):
            legal = game.legal_actions()
            if game.phase == 0:
                mask = bytes(Chooser(game, space).mask())
                mapped = space.flags(game, legal)
                if space.master_possible and not game.master_used and mapped.find(1, space.PLACE) >= 0:
                    mapped[space.MASTER] = 1
                assert mask == bytes(mapped), label
                checked += 1
                if checked % 97 == 0:
                    space.clear_caches()
            game.apply(rng.choice(legal))
    assert checked > 100


def _trace(e, seed):
    out = []
    e.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for agent in e.agent_iter():
        obs, reward, term, trunc, info = e.last()
        out.append((agent, obs["observation"].tobytes(), obs["action_mask"].tobytes(), reward, term, trunc,
                    sorted(info)))
        e.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    return out


def test_wrapped_env_answers_as_pettingzoos_own_wrapper():
    ours = aec.env(rules="revised", players=3, json_obs=False)
    theirs = OrderEnforcingWrapper(aec.raw_env(rules="revised", players=3, json_obs=False))
    for e in (ours, theirs):
        with pytest.raises(AttributeError, match="before reset"):
            e.last()
        with pytest.raises(AssertionError, match="reset"):
            e.agent_iter()
    assert _trace(ours, 4) == _trace(theirs, 4)
    for e in (ours, theirs):  # a turn of agent_iter() without a step between asserts
        e.reset(seed=1)
        turns = iter(e.agent_iter())
        next(turns)
        with pytest.raises(AssertionError, match="step"):
            next(turns)


def test_unseeded_resets_follow_the_last_seed_as_before():
    """The generator of unseeded resets is made only when needed, from the last seed:
    the deals are those of np.random.default_rng(seed) drawn in turn, also across a
    clone and a restore."""
    e = aec.raw_env(json_obs=False)
    e.reset(seed=5)
    expected = np.random.default_rng(5)
    e.reset()
    assert e.table.game.seed == int(expected.integers(2**31))
    state = e.clone()
    e.reset()
    after = e.table.game.seed
    assert after == int(expected.integers(2**31))
    e.restore(state)
    e.reset()
    assert e.table.game.seed == after
    e.reset(seed=9)
    e.reset()
    assert e.table.game.seed == int(np.random.default_rng(9).integers(2**31))
