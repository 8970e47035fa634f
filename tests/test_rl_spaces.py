"""The action index (arena/rl/spaces.py): on states from random and greedy games of every
variant, every masked index is accepted by the engine, every other rejected, and indices,
engine actions and R14 JSON convert into each other; sequences (master, ghost, level-up,
finishing touches) reach every legal move."""

from __future__ import annotations

import random

import numpy as np
import pytest

from engine import FINISH, LEVEL_UP, Game, RuleSpec, action_from_json, action_to_json, compile_rules
from engine.actions import Finish, LevelUp, Master, Place

from arena.rl.spaces import GHOST, MASTER, ActionIndex, Chooser, IllegalIndex, action_index
from rl_helpers import CONFIGS, accepted, sample_states


def single_action_of(space, game, index):
    """The engine action an index names in an ordinary decision, or None."""
    if index >= space.PLACE:
        return space.place_of(index, game)
    return space.actions[index]


@pytest.mark.parametrize("label,variants,players", CONFIGS, ids=[c[0] for c in CONFIGS])
def test_masked_single_actions_are_exactly_the_engines(label, variants, players):
    checked = 0
    for game in sample_states(variants, players):
        if game.phase == FINISH or game.phase == LEVEL_UP:
            continue
        chooser = Chooser(game)
        space = chooser.space
        mask = chooser.mask()
        legal = game.legal_actions()
        # the single actions masked are the engine's list, one index each
        singles = {i for i in np.flatnonzero(mask) if i not in (space.MASTER,) and not space.GHOST <= i < space.PLACE}
        ghosts = [a for a in legal if hasattr(a, "give") and hasattr(a, "placements")]
        assert sorted(space.index_of(a, game) for a in legal if a not in ghosts) == sorted(singles)
        for i in range(space.size):
            if space.DONE <= i < space.PLACE and i != space.GHOST + 0 and not space.GHOST <= i < space.PLACE:
                continue  # sequence indices: checked below
            if space.GHOST <= i < space.PLACE:
                action = space.actions[i]
                assert bool(mask[i]) == (action is not None and action in legal)
                continue
            action = single_action_of(space, game, i)
            if mask[i]:
                assert accepted(game, action), (label, space.describe(i))
                # index -> R14 JSON -> action -> index
                obj = action_to_json(game.rules, action)
                assert space.index_of(action_from_json(game.rules, obj), game) == i
            elif action is not None:
                assert not accepted(game, action), (label, space.describe(i))
        # the master index: legal exactly when a one-piece master action is
        places = [a for a in legal if type(a) is Place]
        if places:
            assert bool(mask[space.MASTER]) == accepted(game, Master((places[0],)))
        checked += 1
    assert checked >= 4 * 8 - 2


def test_built_in_variants_let_the_mask_number_placements_itself():
    """The masks above were built the fast way (placements from the geometry, the rest
    from the engine's list) on every built-in variant."""
    for _, variants, players in CONFIGS:
        assert action_index(compile_rules(RuleSpec.make(variants), players)).own_placements, variants


def _prune_first_puzzle(game, out):
    p = game.players[game.seat]
    if p.unfinished:
        first = p.unfinished[0].card
        out[:] = [a for a in out if not (type(a) is Place and a.puzzle == first)]


def _filter_first_puzzle(game, actions):
    out = list(actions)
    _prune_first_puzzle(game, out)
    return out


@pytest.mark.parametrize("seam", ["generator", "filter"])
def test_a_house_rule_that_prunes_gets_the_engines_own_list(seam):
    """A generator that does not declare ``keeps_places``, or any action filter, may
    remove placements: the mask then maps the engine's whole list, and matches it."""
    rules = compile_rules.__wrapped__(RuleSpec(), 2)  # a ruleset of this test's own
    if seam == "generator":
        rules.extra_generators.append(_prune_first_puzzle)
    else:
        rules.action_filters.append(_filter_first_puzzle)
    space = ActionIndex(rules)
    assert not space.own_placements
    rng = random.Random(4)
    game = Game.new(rules, 2, 11)
    checked = pruned = 0
    while not game.is_over:
        legal = game.legal_actions()
        if game.phase == 0:
            mask = Chooser(game, space).mask()
            singles = [i for i in np.flatnonzero(mask) if i != space.MASTER and not space.GHOST <= i < space.PLACE]
            assert sorted(space.index_of(a, game) for a in legal) == singles
            p = game.players[game.seat]
            if p.unfinished:
                # placements that fit on the first puzzle, which the house rule forbids
                first = p.unfinished[0]
                owned = bytes(1 if n else 0 for n in p.supply)
                pruned += bool(space.placement_run(first.card, first.filled, owned))
            checked += 1
        game.apply(rng.choice(legal))
    assert checked > 20 and pruned > 0


def _check_sequence_masks(game, chooser, build, rng, depth=3):
    """Walk a sequence: at each step every masked placement extends to an accepted move
    and every unmasked one to a rejected move; then take a random masked index."""
    space = chooser.space
    for _ in range(depth):
        mask = chooser.mask()
        chosen = tuple(chooser.chosen)
        for i in range(space.PLACE, space.size):
            place = space.place_of(i, game)
            if place is None:
                assert not mask[i]
                continue
            assert bool(mask[i]) == accepted(game, build(chosen + (place,))), space.describe(i)
        if mask[space.DONE]:
            assert accepted(game, build(chosen))
        legal = [i for i in np.flatnonzero(mask)]
        if not legal:
            return
        move = chooser.play(rng.choice(legal))
        if move is not None:
            assert accepted(game, move)
            return


@pytest.mark.parametrize("label,variants,players", CONFIGS, ids=[c[0] for c in CONFIGS])
def test_sequences_mask_exactly_what_the_engine_accepts(label, variants, players):
    rng = random.Random(3)
    masters = finishes = 0
    for k, game in enumerate(sample_states(variants, players)):
        chooser = Chooser(game)
        space = chooser.space
        if game.phase == FINISH:
            _check_sequence_masks(game, chooser, Finish, rng)
            finishes += 1
        elif k % 3 == 0 and game.phase == 0 and chooser.mask()[space.MASTER]:
            chooser.play(space.MASTER)
            _check_sequence_masks(game, chooser, Master, rng)
            masters += 1
    assert finishes > 0
    assert masters > 0 or label in ("no_master",) or not any(
        Chooser(g).mask()[action_index(g.rules).MASTER] for g in sample_states(variants, players) if g.phase == 0)


def test_no_master_rules_never_offer_the_master_index():
    for game in sample_states(("no-master",), 2):
        if game.phase == 0:
            assert not Chooser(game).mask()[action_index(game.rules).MASTER]


@pytest.mark.parametrize("label,variants,players", CONFIGS, ids=[c[0] for c in CONFIGS])
def test_compound_moves_round_trip_through_index_sequences(label, variants, players):
    """Master actions and finishing touches listed by the engine become index sequences
    that the chooser turns back into the same R14 JSON."""
    rng = random.Random(5)
    seen = 0
    for game in sample_states(variants, players)[::2]:
        if game.phase == FINISH:
            options = [a for _, a in zip(range(40), game.finish_actions())]
        elif game.phase == 0:
            options = [a for _, a in zip(range(40), game.master_actions())]
        else:
            continue
        for action in rng.sample(options, min(4, len(options))):
            chooser = Chooser(game)
            seq = chooser.indices_of(action)
            move = None
            for i in seq:
                assert move is None
                move = chooser.play(i)
            assert move is not None
            assert action_to_json(game.rules, move) == action_to_json(game.rules, action)
            seen += 1
    assert seen > 0


def _ghost_state(seed=0):
    """A ghost game where seat 0 owns a P5 and holds puzzles (set through the public
    attributes: a ghost comes only from a puzzle reward, slow to reach by play)."""
    game = Game.new(RuleSpec.make(["ghost"]), 2, seed)
    for obj in ({"type": "take_puzzle", "color": "white", "slot": 0}, {"type": "take_puzzle", "color": "white", "slot": 1}):
        game.apply(action_from_json(game.rules, obj))
    p5 = game.rules.shape_index["P5"]
    game.players[0].supply[p5] += 1
    game.reserve[p5] -= 1
    return game


def test_ghost_actions_and_their_placements():
    game = _ghost_state()
    chooser = Chooser(game)
    space = chooser.space
    mask = chooser.mask()
    ghosts = [i for i in np.flatnonzero(mask) if space.GHOST <= i < space.PLACE]
    listed = [a for a in game.legal_actions() if type(a).__name__ == "Ghost"]
    assert len(ghosts) == len(listed) > 0
    rng = random.Random(1)
    for i in ghosts:
        chooser = Chooser(game)
        base = space.actions[i]
        move = chooser.play(i)
        if move is not None:
            assert accepted(game, move)
            continue
        assert chooser.mode == GHOST
        _check_sequence_masks(game, chooser, lambda placements: base._replace(placements=placements), rng, depth=2)
        # round trip: the ghost action with one placement
        chooser = Chooser(game)
        chooser.play(i)
        first = next(j for j in np.flatnonzero(chooser.mask()) if j >= space.PLACE)
        action = base._replace(placements=(space.place_of(first, game),))
        seq = Chooser(game).indices_of(action)
        c2 = Chooser(game)
        out = [c2.play(j) for j in seq][-1]
        assert action_to_json(game.rules, out) == action_to_json(game.rules, action)


def _level_up_state():
    """A ghost game at a level-up decision: seat 0 completes a level-up puzzle (the card's
    recess filled through the public attributes but for one cell)."""
    rules_spec = RuleSpec.make(["ghost"])
    for seed in range(60):
        game = Game.new(rules_spec, 2, seed)
        rules = game.rules
        for slot, card in enumerate(game.rows[1]):
            if card >= 0 and rules.puzzles[card].reward in ("+1", "+2"):
                game.apply(action_from_json(rules, {"type": "take_puzzle", "color": "black", "slot": slot}))
                pz = game.players[0].unfinished[0]
                o1 = rules.shape_index["O1"]
                recess = rules.recess[card]
                last = recess & -recess
                pz.filled = recess & ~last
                pid = rules.geometry.lookup[(o1, last)]
                game.apply(Place(card, pid))
                if game.phase == LEVEL_UP:
                    return game
    raise AssertionError("no level-up state found")


def test_level_up_steps_mask_what_the_engine_accepts():
    game = _level_up_state()
    chooser = Chooser(game)
    space = chooser.space
    S = space.shapes
    for depth in range(2):
        mask = chooser.mask()
        assert mask[space.DONE]
        for i in range(space.STEP, space.STEP + S * S):
            step = divmod(i - space.STEP, S)
            assert bool(mask[i]) == accepted(game, LevelUp(tuple(chooser.steps) + (step,)))
        steps = [i for i in np.flatnonzero(mask) if i != space.DONE]
        if not steps:
            break
        move = chooser.play(steps[0])
        if move is not None:
            assert accepted(game, move)
            break
    for option in game.legal_actions():
        seq = Chooser(game).indices_of(option)
        c2 = Chooser(game)
        assert [c2.play(i) for i in seq][-1] == option


def test_unmasked_index_is_refused_with_a_sentence():
    game = Game.new(RuleSpec(), 2, 0)
    chooser = Chooser(game)
    space = chooser.space
    with pytest.raises(IllegalIndex, match="not legal now"):
        chooser.play(space.DONE)
    with pytest.raises(IllegalIndex, match="out of range"):
        chooser.play(space.size)
    assert chooser.mode != MASTER


def test_layout_is_stable_across_rule_sets_with_the_same_shapes():
    spaces = [action_index(Game.new(RuleSpec.make(v), n, 0).rules) for v, n in
              [((), 2), (("revised",), 3), (("solo",), 1), (("no-master",), 4)]]
    assert len({s.size for s in spaces}) == 1
    assert len({tuple(s.segments.items()) for s in spaces}) == 1
    ghost = action_index(Game.new(RuleSpec.make(["ghost"]), 2, 0).rules)
    assert ghost.size > spaces[0].size and ghost.segments["ghost"][1] > 0
