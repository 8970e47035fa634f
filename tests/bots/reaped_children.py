"""A protocol bot whose thinking is done by children the kernel reaps, unseen by any parent.

``python tests/bots/reaped_children.py N MS``: it answers the handshake, then on its first
request ignores SIGCHLD (so its children are reaped as they exit and their CPU time is added
to no parent's) and runs ``N`` children one after the other, each busy until it has used
``MS`` milliseconds of CPU; it writes ``REAPED {"children": N, "child_cpu_ms": ...}`` on
stderr, the CPU the children used by their own count, and plays the first legal option until
the game ends. It imports nothing from the project, so it starts fast.
"""

import json
import os
import signal
import sys
import time

N = int(sys.argv[1]) if len(sys.argv) > 1 else 10
MS = int(sys.argv[2]) if len(sys.argv) > 2 else 150


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def think():
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    used = 0.0
    for _ in range(N):
        r, w = os.pipe()
        if os.fork() == 0:
            os.close(r)
            while time.process_time() < MS / 1000:
                pass
            os.write(w, str(time.process_time()).encode())
            os._exit(0)
        os.close(w)
        used += float(os.read(r, 64) or 0)
        os.close(r)
    print("REAPED " + json.dumps({"children": N, "child_cpu_ms": used * 1000}), file=sys.stderr, flush=True)


def main():
    first = True
    for line in sys.stdin:
        msg = json.loads(line)
        kind = msg["type"]
        if kind == "quit":
            return
        if kind == "hello":
            send({"type": "ready", "id": msg["id"], "name": "reaped-children", "version": "0", "legal_actions": True})
            continue
        if kind == "game_over":
            continue
        if first:
            first = False
            think()
        send({"id": msg["id"], "action": msg["legal"][0] if msg.get("legal") else {"type": "pass"}})


if __name__ == "__main__":
    main()
