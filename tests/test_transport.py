"""The line transport against real processes: lines, deadlines, caps, crashes, groups."""

from __future__ import annotations

import os
import signal
import sys
import time

import pytest

from arena.process.transport import (BotCrashed, BotOutputLimit, BotTimeout, LineTransport, State, TransportStateError,
                             describe_exit)
from proc_check import assert_gone

PY = sys.executable


def transport(code: str, **kw) -> LineTransport:
    t = LineTransport([PY, "-c", code], **kw)
    t.start()
    return t


def deadline(s: float) -> float:
    return time.perf_counter() + s


def test_lines_go_both_ways_and_the_state_follows():
    t = transport("import sys\nfor l in sys.stdin: print(l.strip().upper(), flush=True)")
    try:
        assert t.state is State.IDLE
        t0 = t.send(b"ping\n", deadline(5))
        assert t.state is State.WAITING
        with pytest.raises(TransportStateError):
            t.send(b"again\n", deadline(5))
        line, t1 = t.read_line(deadline(5))
        t.done()
        assert line == b"PING" and t1 >= t0 and t.state is State.IDLE
    finally:
        t.close()
    assert t.state is State.CLOSED
    assert_gone(t.pid)


def test_two_lines_in_one_chunk_are_read_one_at_a_time():
    t = transport("import sys\nsys.stdin.readline(); sys.stdout.write('a\\nb\\n'); sys.stdout.flush(); sys.stdin.read()")
    try:
        t.send(b"go\n", deadline(5))
        assert t.read_line(deadline(5))[0] == b"a"
        assert t.read_line(deadline(5))[0] == b"b"
    finally:
        t.close()


def test_silence_is_a_timeout_at_the_deadline():
    t = transport("import time\ntime.sleep(60)")
    try:
        t.send(b"x\n", deadline(5))
        start = time.perf_counter()
        with pytest.raises(BotTimeout):
            t.read_line(deadline(0.2))
        assert 0.18 < time.perf_counter() - start < 2.0
    finally:
        t.close()
    assert_gone(t.pid)


@pytest.mark.parametrize("code, words", [
    ("import sys\nsys.exit(7)", "exit code 7"),
    ("import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)", "SIGSEGV"),
])
def test_a_crash_reports_exit_code_or_signal_and_stderr(code, words):
    t = transport("import sys\nsys.stderr.write('dying words\\n'); sys.stderr.flush()\n" + code)
    try:
        with pytest.raises(BotCrashed) as info:
            t.send(b"x\n", deadline(5))
            t.read_line(deadline(5))
        assert words in info.value.detail
        assert "dying words" in info.value.detail
    finally:
        t.close()


def test_a_line_over_the_cap_is_an_output_limit():
    t = transport("import sys\nsys.stdin.readline(); sys.stdout.write('x' * 5000); sys.stdout.flush(); sys.stdin.read()",
                  max_line=1000)
    try:
        t.send(b"x\n", deadline(5))
        with pytest.raises(BotOutputLimit, match="without a newline"):
            t.read_line(deadline(5))
    finally:
        t.close()


def test_stderr_goes_to_a_capped_log_never_into_the_protocol(tmp_path):
    log = tmp_path / "bot.log"
    t = transport("import sys\nsys.stderr.write('e' * 200000); sys.stderr.flush(); print('ok', flush=True); sys.stdin.read()",
                  stderr_path=log, stderr_cap=10000)
    try:
        t.send(b"x\n", deadline(5))
        assert t.read_line(deadline(5))[0] == b"ok"
    finally:
        t.close()
    text = log.read_bytes()
    assert 10000 <= len(text) < 10200 and b"stderr log cut at 10000 bytes" in text
    assert t.stderr_bytes == 200000


def test_close_kills_the_whole_group_including_children():
    code = ("import os, time\nfor _ in range(3):\n    if os.fork() == 0:\n        time.sleep(60)\n        os._exit(0)\n"
            "print('forked', flush=True)\ntime.sleep(60)")
    t = transport(code)
    t.send(b"x\n", deadline(5))
    assert t.read_line(deadline(5))[0] == b"forked"
    t.done()
    assert os.getpgid(t.pid) == t.pid and os.getsid(t.pid) == t.pid, "own session and process group"
    t.close()
    assert_gone(t.pid)


def test_pause_stops_the_group_and_resume_continues_it():
    t = transport("import sys, time\nfor l in sys.stdin: print(time.time(), flush=True)")
    try:
        t.pause()
        for _ in range(100):
            state = open(f"/proc/{t.pid}/stat").read().rsplit(")", 1)[1].split()[0]
            if state == "T":
                break
            time.sleep(0.01)
        assert state == "T"
        t.send(b"x\n", deadline(5))
        with pytest.raises(BotTimeout):
            t.read_line(deadline(0.2))
        t.resume()
        assert t.read_line(deadline(5))[0]
    finally:
        t.close()


def test_cpu_time_is_read_from_proc():
    t = transport("import sys\nx = 0\nfor i in range(3_000_000): x += i\nprint(x, flush=True)\nsys.stdin.read()")
    try:
        t.send(b"x\n", deadline(10))
        t.read_line(deadline(10))
        assert t.cpu_seconds() > 0.05
    finally:
        t.close()
    assert t.cpu_seconds() == 0.0


def test_a_missing_program_is_a_crash_at_start():
    t = LineTransport(["/nonexistent/bot"])
    with pytest.raises(BotCrashed, match="cannot start"):
        t.start()


def test_describe_exit():
    assert describe_exit(3) == "exit code 3"
    assert describe_exit(-signal.SIGKILL) == "killed by signal SIGKILL"
    assert describe_exit(None) == "still running"


def test_a_line_already_in_the_pipe_is_taken_even_past_the_deadline():
    """Replies that arrived in time while the arena served another bot (parallel handshakes) count."""
    t = transport("import sys\nsys.stdin.readline(); print('early', flush=True); sys.stdin.read()")
    try:
        t.send(b"x\n", deadline(5))
        time.sleep(0.5)
        assert t.read_line(time.perf_counter() - 1)[0] == b"early"
        t.done()
        t.send(b"y\n", deadline(5))
        with pytest.raises(BotTimeout):
            t.read_line(time.perf_counter() - 1)
    finally:
        t.close()


# ---------------------------------------------------------------- hostile bytes
def writer(body: str, **kw) -> LineTransport:
    """A transport to a process that reads one line, then runs ``body`` (``w(bytes)`` writes and flushes)."""
    t = transport("import sys, time\nr = sys.stdin.buffer.readline\n"
                  "def w(b):\n    sys.stdout.buffer.write(b); sys.stdout.buffer.flush()\n"
                  "r()\n" + body + "\ntime.sleep(30)\n", **kw)
    t.send(b"go\n", deadline(5))
    return t


@pytest.fixture
def closing():
    opened: list[LineTransport] = []
    yield opened
    for t in opened:
        t.close()


def test_a_line_dribbled_byte_by_byte_then_lines_sharing_a_chunk(closing):
    t = writer("for b in b'{\"id\": 1}': w(bytes([b])); time.sleep(0.001)\nw(b'\\nsecond\\nthird\\n')")
    closing.append(t)
    assert [t.read_line(deadline(5))[0] for _ in range(3)] == [b'{"id": 1}', b"second", b"third"]


def test_any_bytes_but_the_newline_pass_through_unchanged(closing):
    t = writer("w(bytes(b for b in range(256) if b != 10) + b'\\n')")
    closing.append(t)
    assert t.read_line(deadline(5))[0] == bytes(b for b in range(256) if b != 10)


def test_a_line_of_exactly_the_cap_is_read_and_one_byte_more_is_an_output_limit(closing):
    ok = writer("w(b'x' * 1000 + b'\\n')", max_line=1000)
    too_long = writer("w(b'x' * 1001 + b'\\n')", max_line=1000)
    closing.extend([ok, too_long])
    assert ok.read_line(deadline(5))[0] == b"x" * 1000
    with pytest.raises(BotOutputLimit, match="a line of 1001 bytes"):
        too_long.read_line(deadline(5))


def test_many_short_lines_count_against_the_output_cap_of_one_request(closing):
    t = writer("line = b'{\"id\": 0}\\n'\nfor _ in range(20000): w(line)", max_output=100_000)
    closing.append(t)
    with pytest.raises(BotOutputLimit, match="more than 100000 bytes during one request"):
        for _ in range(20000):
            t.read_line(deadline(5))


def test_a_partial_line_then_exit_is_a_crash(closing):
    t = writer("w(b'{\"id\": 1, \"act'); sys.exit(4)")
    closing.append(t)
    with pytest.raises(BotCrashed, match="closed its stdout: exit code 4"):
        t.read_line(deadline(5))
    assert t.state is State.CLOSED
