"""A local worker stopped as soon as it is forked never runs its coordinator's handler."""

from __future__ import annotations

import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent("""
    import multiprocessing, os, signal, sys
    from arena.execution.local import _Worker

    main = os.getpid()

    def coordinator_handler(signum, frame):
        # a run's StopSignals: in a child it would unwind the coordinator's code there
        if os.getpid() != main:
            sys.stderr.write(f"child {os.getpid()} ran the coordinator's handler\\n")
            sys.stderr.flush()
            os._exit(3)

    signal.signal(signal.SIGTERM, coordinator_handler)
    ctx = multiprocessing.get_context("fork")
    codes = []
    for _ in range(int(sys.argv[1])):
        w = _Worker(ctx, None)
        w.stop(kill=True)  # at once: a run that finds nothing left to play
        codes.append(w.proc.exitcode)
    print(" ".join(map(str, codes)))
""")


def test_a_worker_stopped_at_once_ends_through_its_own_handler():
    done = subprocess.run([sys.executable, "-c", SCRIPT, "60"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "ran the coordinator's handler" not in done.stderr
    codes = done.stdout.split()
    assert len(codes) == 60 and set(codes) <= {"0", "-15"}, codes
