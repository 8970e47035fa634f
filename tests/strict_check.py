"""The strict tier's requirement in tests: bubblewrap and the cgroup controllers.

A test of the strict tier calls :func:`require_strict` first: where the machine cannot run
strict it is skipped with the reason, except in CI (``CI=true``), where that is a failure:
CI installs bubblewrap, so the real thing is tested there.
"""

from __future__ import annotations

import os

import pytest

from arena.process.sandbox import strict_missing


def require_strict() -> None:
    """Skip (or, with ``CI=true``, fail) unless the strict tier can run here."""
    why = strict_missing()
    if why:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI must test the strict tier, but {why}")
        pytest.skip(why)
