"""Build and check a submitted bot, each in the sandbox, with a time limit and its log kept.

Both steps run through :class:`arena.process.sandbox.Sandbox` (tier ``strict`` by default:
an unprivileged user, no network, memory and process caps where the machine allows them).
The build runs ``sh -c BUILD`` in the package folder; the conformance check
(:func:`arena.process.check_bot.check_bot`) runs in a Python process that is itself started
in the sandbox (:mod:`arena.packages.checkrun`), so the bot it starts is confined too. What the
sandbox really gave each step (``Sandbox.record()``) is kept with the submission: a
protection the machine lacks is named with its reason, never silently assumed.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ArenaError
from ..process.sandbox import Limits, Sandbox

LOG_CAP = 64 << 10


@dataclass
class StepResult:
    """One sandboxed step: exit code (None if killed at the time limit), its log and sandbox record."""

    code: int | None
    log: str
    timed_out: bool
    seconds: float
    sandbox: dict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """Exited with 0 within the time limit."""
        return self.code == 0 and not self.timed_out


def _chown_tree(folder: Path, uid: int, gid: int) -> None:
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            os.lchown(os.path.join(root, name), uid, gid)
    os.lchown(folder, uid, gid)


def _copy_back(inside: Path, folder: Path) -> None:
    """What a step left in its working folder, back into ``folder`` (owned by the arena);
    links are copied as links and special files are left behind."""
    for root, dirs, files in os.walk(inside):
        rel = Path(root).relative_to(inside)
        (folder / rel).mkdir(parents=True, exist_ok=True)
        for name in files:
            src, dst = Path(root) / name, folder / rel / name
            if src.is_symlink():
                if not dst.is_symlink() and not dst.exists():
                    os.symlink(os.readlink(src), dst)
            elif src.is_file():
                shutil.copy2(src, dst)


def run_sandboxed(argv: list[str], timeout_s: float, tier: str = "strict", cwd: Path | None = None,
                  label: str = "build", memory_mb: int = 1024, hide: list = (), copy_back: bool = True) -> StepResult:
    """Run ``argv`` in the sandbox ``tier`` (in ``cwd`` if given, made the sandbox user's), output kept.

    The process and everything it started are killed at ``timeout_s``. The log is the
    last 64 KiB of standard output and standard error together. ``memory_mb`` caps the
    memory of the whole tree (see ``Sandbox.record()`` for how it is enforced here).
    ``hide`` names paths the step must never see (the league file, the other packages).

    Where the tier gives the step a working folder of its own, ``cwd`` is copied into it
    and the step works on the copy: paths into ``cwd`` on the command line are moved to
    the copy, and with ``copy_back`` what the step left there is copied back into ``cwd``.
    So a step never needs to reach the folder of packages (closed to everyone else)."""
    sandbox = Sandbox(tier, Limits(cpu_s=max(1, int(timeout_s) + 5), memory_mb=memory_mb), hide=[str(h) for h in hide],
                      host_workdir=cwd is not None)
    launch = sandbox.prepare(argv, label=label)
    inside = None  # the folder the step works in, when it is not ``cwd`` itself
    if cwd is not None:
        if launch.tmpdir:
            # The sandbox's working folder is the only place a sandboxed step may write (under
            # strict the only one it sees): the package is copied in, worked on there.
            inside = Path(launch.tmpdir)
            shutil.copytree(cwd, inside, symlinks=True, dirs_exist_ok=True)
            src = str(Path(cwd).resolve())
            # the step's own words only: the sandbox's (a hidden package folder) stay as they are
            head, own = launch.argv[:len(launch.argv) - len(argv)], launch.argv[len(launch.argv) - len(argv):]
            launch.argv = head + [str(inside) + a[len(src):] if a == src or a.startswith(src + "/") else a
                                  for a in own]
        else:
            launch.cwd = str(cwd)
        if "unprivileged_user" in launch.protections:
            st = os.stat(launch.tmpdir)
            _chown_tree(inside or Path(cwd), st.st_uid, st.st_gid)
    t0 = time.perf_counter()
    timed_out = False
    with tempfile.TemporaryFile() as out:
        try:
            proc = subprocess.Popen(launch.argv, cwd=launch.cwd, env=launch.env, preexec_fn=launch.preexec_fn,
                                    start_new_session=True, stdin=subprocess.DEVNULL, stdout=out,
                                    stderr=subprocess.STDOUT, close_fds=True)
        except (OSError, subprocess.SubprocessError) as exc:
            sandbox.cleanup()
            return StepResult(127, f"cannot start {argv[0]}: {exc}", False, 0.0, sandbox.record())
        launch.started(proc.pid)
        try:
            proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
        finally:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except OSError:
                pass
            launch.kill_extra()
            code = proc.wait()
            if inside is not None and copy_back:
                _copy_back(inside, Path(cwd))
            sandbox.cleanup()
        seconds = time.perf_counter() - t0
        size = out.seek(0, os.SEEK_END)
        out.seek(max(0, size - LOG_CAP))
        log = out.read().decode("utf-8", "replace")
    if size > LOG_CAP:
        log = f"[... {size - LOG_CAP} bytes cut ...]\n" + log
    if timed_out:
        log += f"\n[stopped: the time limit of {timeout_s:g} s was reached]\n"
    return StepResult(None if timed_out else code, log, timed_out, seconds, sandbox.record())


def build(folder: Path, command: str, timeout_s: float = 300, tier: str = "strict", memory_mb: int = 1024,
          hide: list = ()) -> StepResult:
    """Run the manifest's build command in (a copy of) the package folder; what it made is copied back."""
    return run_sandboxed(["sh", "-c", command], timeout_s, tier, cwd=folder, label="build", memory_mb=memory_mb,
                         hide=hide)


#: How to ask each known toolchain for its version (proof that it runs).
PROBES = {"python3": "python3 --version", "node": "node --version", "cc": "cc --version", "c++": "c++ --version",
          "make": "make --version", "go": "go version", "java": "java -version", "rust": "cargo --version && rustc --version"}
_runnable: dict[str, dict[str, str]] = {}
_runnable_lock = threading.Lock()


def runnable_toolchains(tier: str = "strict") -> dict[str, str]:
    """The known toolchains a build in the sandbox ``tier`` can really run: ``{name: program}``.

    Each is probed once per process and tier by running its version command as a build
    would (``sh -c`` in the sandbox); a toolchain found on the server's PATH but not
    inside the sandbox (e.g. under the server user's home) is not offered."""
    from .package import toolchain_program

    with _runnable_lock:
        if tier in _runnable:
            return dict(_runnable[tier])
        found = {}
        for name, probe in PROBES.items():
            program = toolchain_program(name)
            if program is None:
                continue
            try:
                step = run_sandboxed(["sh", "-c", probe], 60, tier, label=f"probe-{name}")
            except ArenaError:
                continue
            if step.ok:
                found[name] = program
        _runnable[tier] = found
        return dict(found)


def check(argv: list[str], timeout_s: float = 300, tier: str = "strict", move_ms: int = 2000,
          program_dir: Path | None = None, memory_mb: int = 1024, hide: list = ()) -> tuple[dict, StepResult]:
    """Run the conformance check on ``argv`` in the sandbox; ``(report, step)``. With
    ``program_dir`` (the bot's package) the check runs the bot from a copy of it in the
    step's own working folder.

    ``report`` is :meth:`arena.process.check_bot.Report.to_json` (``{"ok", "checks"}``), or
    ``{"ok": False, "error": ...}`` when the checker gave no report (time limit, crash)."""
    step = run_sandboxed([sys.executable, "-m", "arena.packages.checkrun", "--move-ms", str(move_ms), "--", *argv],
                         timeout_s, tier, cwd=program_dir, label="check", memory_mb=memory_mb, hide=hide,
                         copy_back=False)
    report = None
    for line in reversed(step.log.splitlines()):
        if line.startswith("{"):
            try:
                report = json.loads(line)
            except ValueError:
                pass
            break
    if not isinstance(report, dict) or "ok" not in report:
        why = "the time limit was reached" if step.timed_out else f"the checker exited with code {step.code}"
        report = {"ok": False, "checks": [], "error": f"no report: {why}", "log": step.log[-4000:]}
    return report, step
