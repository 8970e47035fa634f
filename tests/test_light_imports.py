"""What starting a run imports: the tournament runner (every ``arena run``, ``match``, ``play``
league and experiment command, and every worker forked from them) does not import
scipy.optimize or scipy.stats, which took a second; they are imported by the few figures
that need them (an SPRT's generalized bounds, a rating's fit)."""

from __future__ import annotations

import json
import subprocess
import sys


def test_the_runner_imports_no_scipy():
    code = "import sys, arena.tournament.runner, arena.tournament.standings; print(any(m.startswith('scipy') for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_the_normal_distribution_function_is_scipys():
    from scipy.stats import norm

    from arena.tournament.ratings import normal_cdf

    for z in (-8.0, -3.1, -0.4, 0.0, 0.25, 1.96, 6.0):
        assert abs(normal_cdf(z) - norm.cdf(z)) < 1e-15


_BOT_PROCESS = """
import json, subprocess, sys
from engine import RuleSpec, compile_rules
from arena.referee import _hello
from arena.process.protocol import encode
rules = compile_rules(RuleSpec.make({variants!r}), 2)
hello = dict(_hello(0, rules, {{"move_ms": 1000}}, 5), options={{}}, id=1)
probe = "import sys, runpy; sys.argv = ['bots.run', {bot!r}]; " \\
        "import atexit; atexit.register(lambda: print('LOADED', 'importlib.metadata' in sys.modules, " \\
        "__import__('engine.variants').variants._PM is not None, file=sys.stderr)); " \\
        "runpy.run_module('bots.run', run_name='__main__')"
bot = subprocess.run([sys.executable, "-c", probe], input=encode(hello) + b'{{"type": "quit"}}\\n',
                     capture_output=True, timeout=60)
print(bot.stdout.decode().splitlines()[0], bot.stderr.decode().strip().splitlines()[-1])
"""


def _bot_process_loads(bot: str, variants: list) -> tuple[dict, str]:
    out = subprocess.run([sys.executable, "-c", _BOT_PROCESS.format(bot=bot, variants=variants)],
                         capture_output=True, text=True, timeout=120, check=True)
    ready, loaded = out.stdout.strip().split(" LOADED ")
    return json.loads(ready), loaded


def test_a_built_in_bot_process_of_the_base_game_loads_no_plugin():
    """A built-in bot finds its policy through the built-in modules' own hooks and the base
    game needs no variant: its process reads no entry point and loads no plugin (half its
    start-up); a game of a variant loads them, as it must."""
    for bot in ("greedy", "random"):
        ready, loaded = _bot_process_loads(bot, [])
        assert ready["type"] == "ready" and ready["name"] == bot
        assert loaded == "False False", f"{bot}: importlib.metadata imported / plugins loaded: {loaded}"
    ready, loaded = _bot_process_loads("greedy", ["revised"])
    assert ready["type"] == "ready" and loaded.endswith("True")


def test_the_built_in_bot_modules_are_the_projects_entry_points():
    """``bots.policy.BUILTIN_MODULES`` (found without the plugin manager) names exactly the
    bot modules ``pyproject.toml`` publishes, and each built-in policy is the one the plugin
    manager gives."""
    import tomllib
    from pathlib import Path

    from arena.plugins import bots
    from bots.policy import BUILTIN_MODULES, PolicyFactory, builtin_policy

    project = tomllib.loads((Path(__file__).resolve().parent.parent / "pyproject.toml").read_text())
    published = {v for k, v in project["project"]["entry-points"]["arena"].items() if k.startswith("bots.")}
    assert published == set(BUILTIN_MODULES)
    with_policy = {name: entry.policy for name, entry in bots().items() if entry.policy is not None
                   and (getattr(entry.policy, "module", None) or entry.policy.__module__).startswith("bots.")}
    assert {"greedy", "random", "planner", "pass"} <= set(with_policy)
    for name, registered in with_policy.items():
        mine = builtin_policy(name)
        if isinstance(registered, PolicyFactory):
            assert isinstance(mine, PolicyFactory) and (mine.module, mine.attr) == (registered.module, registered.attr)
        else:
            assert mine is registered, name
    assert builtin_policy("no-such-bot") is None
