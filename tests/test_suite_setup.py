"""How the suite sets itself up, whoever starts it and however: the environment of a venv
that is not activated, one uid-registry label per xdist worker, and which tests a bare
``python -m pytest`` runs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from arena.process.uids import instance_label
from conftest import _activate_the_venv

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("executable, path, first", [
    # not activated, started by its path or from beside the checkout: its commands come first
    ("/srv/venv/bin/python", "/usr/bin:/bin", "/srv/venv/bin"),
    ("/srv/proj/../venv/bin/python", "/usr/bin:/bin", "/srv/venv/bin"),
    # activated: the PATH is as the activation made it
    ("/srv/venv/bin/python", "/usr/bin:/srv/venv/bin:/bin", "/usr/bin"),
])
def test_a_venv_that_is_not_activated_runs_the_suite_as_an_activated_one(monkeypatch, executable, path, first):
    monkeypatch.setattr(sys, "executable", executable)
    monkeypatch.setattr(sys, "prefix", "/srv/venv")
    monkeypatch.setattr(sys, "base_prefix", "/usr")
    monkeypatch.setenv("PATH", path)
    _activate_the_venv()
    assert os.environ["PATH"].split(os.pathsep)[0] == first
    assert os.environ["PATH"].endswith(path)


def test_an_interpreter_outside_a_venv_leaves_the_path_alone(monkeypatch):
    monkeypatch.setattr(sys, "executable", "/opt/python/bin/python3")
    monkeypatch.setattr(sys, "prefix", "/opt/python")
    monkeypatch.setattr(sys, "base_prefix", "/opt/python")
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    _activate_the_venv()
    assert os.environ["PATH"] == "/usr/bin:/bin"


def test_each_xdist_worker_has_a_uid_registry_label_of_its_own():
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if not worker:
        pytest.skip("not run by a pytest-xdist worker")
    assert instance_label().endswith(f"-{worker}")


@pytest.mark.slow  # it collects the whole suite twice
def test_a_bare_run_leaves_the_slow_tests_out_and_m_or_a_file_brings_them_back():
    def collected(*args: str) -> str:
        done = subprocess.run([sys.executable, "-m", "pytest", "-n", "0", "--collect-only", "-q",
                               "-p", "no:cacheprovider", *args], cwd=ROOT, capture_output=True, text=True,
                              timeout=600, env={**os.environ, "PYTEST_ADDOPTS": ""})
        return done.stdout

    slow = "tests/test_web_site.py::test_wrong_token_is_refused"  # a file marked slow
    assert slow not in collected()
    assert slow in collected("-m", "")  # everything
    assert slow in collected("tests/test_web_site.py")  # a file named runs whole
