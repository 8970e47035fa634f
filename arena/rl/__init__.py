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
- :mod:`.gym` — the Gymnasium single-agent environment against built-in opponents;
- :mod:`.policy_bot` — any ``obs, mask -> index`` function as a protocol bot
  (``python -m arena.rl.policy_bot module:function``);
- :mod:`.bench` — ``arena bench env``: environment steps per second against the
  engine's own decisions per second;
- :mod:`.examples` — a linear softmax policy trained with REINFORCE in numpy.

May import: ``engine``, the built-in policies through :func:`arena.plugins.policy`,
:mod:`arena.sdk`, numpy; :mod:`.bench` also the engine benchmark's replay
(:mod:`arena.bench.engine`) and ``render("ansi")`` the terminal renderer
(:mod:`arena.replay.render`). ``gymnasium`` and ``pettingzoo`` (the ``rl`` extra:
``pip install '.[rl]'``) are imported only by :mod:`.aec` and :mod:`.gym`, so the action
space, the observations and the policy bot work without them. Nothing of the host imports
this package but ``arena.cli.rl``.
"""
