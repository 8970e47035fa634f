"""What starting a run imports: the tournament runner (every ``arena run``, ``match``, ``play``
league and experiment command, and every worker forked from them) does not import
scipy.optimize or scipy.stats, which took a second; they are imported by the few figures
that need them (an SPRT's generalized bounds, a rating's fit)."""

from __future__ import annotations

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
