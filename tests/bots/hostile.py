"""A protocol bot that attacks the arena, its opponent and the results, for the hostile suite.

``python tests/bots/hostile.py MODE [ARG...]``: it answers the handshake, makes its attack
on the first request, writes what each attempt gave on stderr as one line
``HOSTILE {"attempt": "ok" or the error's name, ...}``, then plays the first legal option
until the game ends. Attempts that must fail report the exception's name; ``ok`` means the
sandbox let it through. It imports nothing from the project, so it starts fast.

Modes (``ARG`` in brackets):

- ``stop_arena PID``: SIGSTOP the arena (``PID``) and its parent, then SIGCONT them.
- ``signal_opponent MARK``: SIGSTOP every process whose command line holds ``MARK``.
- ``spy_opponent MARK``: ptrace-attach, read ``/proc/PID/mem``, ``environ``, ``cwd`` of them.
- ``results FILE DIR``: read and append to the results database ``FILE``; create a file in ``DIR``.
- ``logs DIR``: list ``DIR`` and read every file in it (other bots' logs).
- ``env PID NAME``: look for the variable ``NAME`` in its own environment and in the arena's.
- ``litter TOKEN``: leave files named ``TOKEN`` in ``/tmp`` and ``/dev/shm``.
- ``daemon``: double-fork a daemon in a new session that sleeps for an hour.
- ``spin N``: start ``N`` processes that spin on the CPU for the rest of the game.
- ``spin_escaped``: start a child in a new session that spins for the rest of the game.
- ``fork_bomb``: fork without bound (each child forks too), for two seconds.
- ``network PORT``: connect to ``127.0.0.1:PORT``.
- ``burn MS``: a grandchild in a new session (orphaned at once) uses ``MS`` ms of CPU and
  exits; the bot waits for it.
- ``ipc KEY``: create a System V shared memory segment, semaphore set and message queue
  with the key ``KEY`` (mode 0666), and leave them.
"""

import ctypes
import json
import os
import signal
import socket
import sys
import time

MODE = sys.argv[1] if len(sys.argv) > 1 else "good"
ARGS = sys.argv[2:]


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def attempt(report, name, fn):
    try:
        fn()
        report[name] = "ok"
    except BaseException as exc:  # noqa: BLE001 - every failure is the report
        report[name] = type(exc).__name__


def victims(mark):
    me = os.getpid()
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) != me:
            try:
                with open(f"/proc/{name}/cmdline", "rb") as f:
                    line = f.read()
                    if mark.encode() in line and b"hostile.py" not in line:
                        found.append(int(name))
            except OSError:
                pass
    return found


def stop(pid):
    """SIGSTOP ``pid`` and check that it stopped (a PID namespace's first process takes no
    signal from inside, however the call returns)."""
    os.kill(pid, signal.SIGSTOP)
    for _ in range(50):
        with open(f"/proc/{pid}/stat") as f:
            if f.read().rsplit(")", 1)[1].split()[0] in ("T", "t"):
                return
        time.sleep(0.002)
    raise ChildProcessError("the signal had no effect")


def read(path, n=4096):
    with open(path, "rb") as f:
        return f.read(n)


def attack():
    report = {}
    if MODE == "stop_arena":
        arena = int(ARGS[0])
        parent = int(open(f"/proc/{arena}/stat").read().rsplit(")", 1)[1].split()[1]) \
            if os.path.exists(f"/proc/{arena}/stat") else os.getppid()
        for name, pid in (("arena", arena), ("arena_parent", parent), ("my_parent", os.getppid())):
            attempt(report, f"stop_{name}", lambda pid=pid: stop(pid))
            if report[f"stop_{name}"] == "ok":
                os.kill(pid, signal.SIGCONT)
        attempt(report, "kill_arena", lambda: os.kill(arena, 0))
    elif MODE == "signal_opponent":
        found = victims(ARGS[0])
        report["seen"] = len(found)
        for pid in found:
            attempt(report, f"stop_{pid}", lambda pid=pid: os.kill(pid, signal.SIGSTOP))
    elif MODE == "spy_opponent":
        found = victims(ARGS[0])
        report["seen"] = len(found)
        libc = ctypes.CDLL(None, use_errno=True)
        for pid in found:
            def ptrace(pid=pid):
                if libc.ptrace(16, pid, None, None) != 0:  # PTRACE_ATTACH
                    raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
                libc.ptrace(17, pid, None, None)  # PTRACE_DETACH

            def mem(pid=pid):
                with open(f"/proc/{pid}/mem", "rb") as f:
                    maps = read(f"/proc/{pid}/maps").split(b"\n")[0]
                    f.seek(int(maps.split(b"-")[0], 16))
                    f.read(16)

            attempt(report, f"ptrace_{pid}", ptrace)
            attempt(report, f"mem_{pid}", mem)
            attempt(report, f"environ_{pid}", lambda pid=pid: read(f"/proc/{pid}/environ"))
            attempt(report, f"cwd_{pid}", lambda pid=pid: os.listdir(f"/proc/{pid}/cwd"))
    elif MODE == "results":
        db, folder = ARGS[0], ARGS[1]
        attempt(report, "read_results", lambda: read(db))
        attempt(report, "write_results", lambda: open(db, "ab").write(b"hostile"))
        attempt(report, "write_project", lambda: open(os.path.join(folder, "hostile-was-here"), "wb").close())
    elif MODE == "logs":
        folder = ARGS[0]
        attempt(report, "list_logs", lambda: os.listdir(folder))
        names = []
        try:
            names = os.listdir(folder)
        except OSError:
            pass
        for name in names:
            attempt(report, f"read_{name}", lambda name=name: read(os.path.join(folder, name)))
    elif MODE == "env":
        arena, name = int(ARGS[0]), ARGS[1]
        report["own_env"] = "ok" if name in os.environ else "absent"

        def arena_env():
            if name.encode() not in read(f"/proc/{arena}/environ", 1 << 20):
                raise LookupError(name)
        attempt(report, "arena_env", arena_env)
    elif MODE == "litter":
        token = ARGS[0]
        for folder in ("/tmp", "/dev/shm"):
            def leave(folder=folder):
                with open(os.path.join(folder, token), "w") as f:
                    f.write("left behind")
            attempt(report, f"litter_{folder}", leave)
    elif MODE == "daemon":
        r, w = os.pipe()
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                os.close(r)
                os.write(w, str(os.getpid()).encode())
                os.close(w)
                signal.signal(signal.SIGTERM, signal.SIG_IGN)
                signal.signal(signal.SIGHUP, signal.SIG_IGN)
                time.sleep(3600)
            os._exit(0)
        os.close(w)
        report["daemon_pid"] = int(os.read(r, 32) or b"0")
        os.close(r)
        os.wait()
    elif MODE == "spin":
        started = 0
        for _ in range(int(ARGS[0])):
            try:
                if os.fork() == 0:
                    os.nice(19)  # within the bot's own share: the bot still answers; others see 120 spinners
                    while True:
                        pass
            except OSError:
                break
            started += 1
        report["spinners"] = started
    elif MODE == "spin_escaped":
        if os.fork() == 0:
            os.setsid()
            while True:
                pass
        report["spin_escaped"] = "started"
    elif MODE == "fork_bomb":
        end = time.time() + 2
        if os.fork() == 0:
            while time.time() < end:
                try:
                    os.fork()
                except OSError:
                    time.sleep(0.01)
            time.sleep(3600)
        report["fork_bomb"] = "started"
    elif MODE == "burn":
        r, w = os.pipe()
        child = os.fork()
        if child == 0:
            os.setsid()
            if os.fork() == 0:
                os.close(r)
                while time.process_time() < int(ARGS[0]) / 1000:
                    pass
                os.write(w, b"done")
                os._exit(0)
            os._exit(0)
        os.close(w)
        os.waitpid(child, 0)
        report["burn"] = os.read(r, 8).decode()
        os.close(r)
    elif MODE == "ipc":
        libc = ctypes.CDLL(None, use_errno=True)
        key, flags = int(ARGS[0]), 0o1000 | 0o666  # IPC_CREAT | rw for all

        def made(name, ident):
            if ident < 0:
                raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
            report[f"{name}_id"] = ident
        attempt(report, "shm", lambda: made("shm", libc.shmget(key, 4096, flags)))
        attempt(report, "sem", lambda: made("sem", libc.semget(key, 1, flags)))
        attempt(report, "msg", lambda: made("msg", libc.msgget(key, flags)))
    elif MODE == "network":
        attempt(report, "connect", lambda: socket.create_connection(("127.0.0.1", int(ARGS[0])), timeout=1).close())
    print("HOSTILE " + json.dumps(report), file=sys.stderr, flush=True)


def main():
    first = True
    for line in sys.stdin:
        msg = json.loads(line)
        kind = msg["type"]
        if kind == "quit":
            return
        if kind == "hello":
            send({"type": "ready", "id": msg["id"], "name": f"hostile-{MODE}", "version": "0", "legal_actions": True})
            continue
        if kind == "game_over":
            continue
        if first:
            first = False
            attack()
        send({"id": msg["id"], "action": msg["legal"][0] if msg.get("legal") else {"type": "pass"}})


if __name__ == "__main__":
    main()
