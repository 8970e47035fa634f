"""Loading the plugins registers every bot without importing what it plays with: a bot
whose code is costly to import (``learned``: numpy; the planners: their search) registers
where its policy lives, imported when it first plays (:class:`bots.policy.PolicyFactory`).
Each check runs in a fresh interpreter, since this one has imported everything."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

#: modules no command needs until a bot that uses them plays
HEAVY = ("numpy", "bots.learned.policy", "bots.planner.policy", "bots.planner.search")
BUILT_IN = {"greedy", "random", "planner", "planner-fast", "learned", "pass"}


def fresh(code: str, *args: str) -> dict:
    """Run ``code`` in a new interpreter; it prints one JSON object as its last line."""
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


LOADED = f"[m for m in {HEAVY!r} if m in sys.modules]"


def test_listing_the_bots_imports_none_of_their_code():
    out = fresh(f"import json, sys\nfrom arena.plugins import bots\n"
                f"print(json.dumps({{'bots': sorted(bots()), 'loaded': {LOADED}}}))")
    assert BUILT_IN <= set(out["bots"]) and out["loaded"] == []


def test_a_greedy_only_game_in_process_imports_no_numpy():
    out = fresh(f"""import json, sys
from arena.execution.inprocess import play_inprocess
outcome = play_inprocess({{"seats": [{{"name": "g", "bot": "greedy"}}, {{"name": "r", "bot": "random"}}],
                          "rules": {{"variants": [], "params": {{}}}}, "players": 2, "seed": 3, "log_dir": None}})
print(json.dumps({{"ranking": outcome["result"]["ranking"], "loaded": {LOADED}}}))""")
    assert sorted(out["ranking"]) == [1, 2] and "numpy" not in out["loaded"]


@pytest.mark.parametrize("tier", ["none", "auto"])
def test_arena_play_greedy_random_imports_no_numpy(tier):
    """The command as typed, in this interpreter, and the greedy bot's own process."""
    out = fresh(f"""import json, sys
from arena.cli import main
sys.argv = ["arena", "play", "greedy", "random", "--sandbox", sys.argv[1]]
try:
    main()
except SystemExit as exc:
    assert not exc.code, exc.code
from bots.run import PolicyBot
PolicyBot("greedy")  # what `python -m bots.run greedy` loads before its first game
print(json.dumps({{"loaded": {LOADED}}}))""", tier)
    assert "numpy" not in out["loaded"], out


def test_every_bot_is_listed_and_each_policy_is_made_when_asked():
    out = fresh(f"""import json, subprocess, sys
from arena.plugins import policy
listed = subprocess.run([sys.executable, "-m", "arena.cli", "bots", "--json"], capture_output=True, text=True).stdout
plugins = subprocess.run([sys.executable, "-m", "arena.cli", "plugins", "--json"], capture_output=True, text=True).stdout
before = {LOADED}
made = {{name: type(policy(name)).__name__ for name in ("greedy", "planner-fast", "learned")}}
print(json.dumps({{"bots": json.loads(listed), "plugins": json.loads(plugins), "before": before, "made": made,
                  "after": {LOADED}}}))""")
    bots = {b["name"]: b for b in out["bots"]}
    assert BUILT_IN <= set(bots) and all(bots[name]["inprocess"] for name in BUILT_IN)
    hooks = {p["name"]: p["hooks"] for p in out["plugins"]}
    assert all(hooks[f"bots.{n}"] == ["arena_register_bots"] for n in ("greedy", "learned", "planner", "planner_fast"))
    assert out["before"] == []
    assert out["made"] == {"greedy": "GreedyPolicy", "planner-fast": "PlannerFastPolicy", "learned": "LearnedPolicy"}
    assert set(out["after"]) == set(HEAVY)


def test_the_policies_are_found_where_they_were():
    from bots.learned import MAX_CANDIDATES, LearnedPolicy, candidate_features
    from bots.learned.policy import LearnedPolicy as Learned
    from bots.planner import SAFETY, PlannerPolicy, Weights, solver_for
    from bots.planner.fast import FAST_NODES, PlannerFastPolicy
    from bots.planner.fast_policy import PlannerFastPolicy as Fast

    assert LearnedPolicy is Learned and PlannerFastPolicy is Fast and issubclass(Fast, PlannerPolicy)
    assert MAX_CANDIDATES == FAST_NODES == 40 and callable(candidate_features) and callable(solver_for)
    assert 0 < SAFETY < 1 and Weights().__class__.__name__ == "Weights"
    import bots.learned

    with pytest.raises(AttributeError):
        bots.learned.no_such_name  # noqa: B018
