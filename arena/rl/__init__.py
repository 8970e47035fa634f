"""Project L as a reinforcement-learning environment: a fixed action space, array
observations, PettingZoo and Gymnasium environments, and policies as protocol bots.

Owns:

- :mod:`.spaces` — the fixed-size action index of a rule set (every single action,
  decision and placement gets a stable index), the legal-action mask from the engine, and
  index <-> engine action <-> R14 JSON. Master actions, ghost placements, level-up steps
  and the finishing touches are played as sequences of indices (:class:`.spaces.Chooser`);
- :mod:`.observe` — the numpy observation of one seat, laid out as documented there,
  built from what :func:`engine.observation.observation` shows that seat;
- :mod:`.aec` — the PettingZoo AEC environment (1-4 seats, every variant and parameter);
- :mod:`.gym` — the Gymnasium single-agent environment against in-process opponents,
  and its registered ids (``gym.make("arena.rl.gym:ProjectL-v0")``);
- :mod:`.selfplay` — opponents from names, policies and saved snapshots, and the
  self-play pool of past snapshots;
- :mod:`.universal` — one observation shape (values in [-1, 1]) and one action index for
  every rule set and seat count;
- :mod:`.core` — the game behind both environments: indices in, observations, rewards
  (shaped by score progress when asked) and the refusals of bad actions out;
- :mod:`.policy_bot` — any ``obs, mask -> index`` function as a protocol bot
  (``python -m arena.rl.policy_bot module:function``);
- :mod:`.research` — afterstates, expert labels (the move a built-in bot would play, as
  indices) and :func:`evaluate` (a policy's win rate against an opponent, with its
  interval); the environments' ``clone()``/``restore()`` serve tree search;
- :mod:`.vector` — a Gymnasium ``VectorEnv`` of many environments in one process;
- :mod:`.bench` — ``arena bench env``: environment steps per second against the
  engine's own decisions per second, actions sampled from the mask;
- :mod:`.examples` — a linear softmax policy trained with REINFORCE in numpy, and
  MaskablePPO (sb3-contrib, the ``learn`` extra) with self-play and shaped rewards.

May import: ``engine``, the built-in policies through :func:`arena.plugins.policy`,
:mod:`arena.sdk`, numpy; :mod:`.bench` also the engine benchmark's replay
(:mod:`arena.bench.engine`) and ``render("ansi")`` the terminal renderer
(:mod:`arena.replay.render`). ``gymnasium`` and ``pettingzoo`` (the ``rl`` extra:
``pip install '.[rl]'``) are imported only by :mod:`.aec`, :mod:`.gym` and :mod:`.vector`, torch and
sb3-contrib only by :mod:`.examples.maskable_ppo`, so the action
space, the observations and the policy bot work without them. Nothing of the host imports
this package but ``arena.cli.rl``.
"""


def __getattr__(name):
    """``arena.rl.evaluate``: :func:`arena.rl.research.evaluate`, imported when first asked."""
    if name == "evaluate":
        from .research import evaluate
        return evaluate
    raise AttributeError(f"module 'arena.rl' has no attribute {name!r}")
