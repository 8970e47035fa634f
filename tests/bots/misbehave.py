"""A protocol bot that misbehaves on purpose, for the fault tests.

``python tests/bots/misbehave.py MODE [ARG]``: it answers the handshake properly (except
in ``slow_start``), then on its first request does what MODE says; otherwise it plays the
first legal option (``slow SECONDS`` sleeps before every reply). It imports nothing from the project, so it starts fast.
"""

import json
import os
import signal
import socket
import sys
import time

MODE = sys.argv[1] if len(sys.argv) > 1 else "good"
ARG = sys.argv[2] if len(sys.argv) > 2 else ""


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def misbehave(msg):
    rid = msg["id"]
    if MODE == "hang":
        time.sleep(3600)
    elif MODE == "crash":
        sys.exit(3)
    elif MODE == "segv":
        os.kill(os.getpid(), signal.SIGSEGV)
    elif MODE == "garbage":
        sys.stdout.write("this is not JSON\n")
        sys.stdout.flush()
        return True
    elif MODE == "wrong_id":
        send({"id": rid + 100, "action": {"type": "pass"}})
        return True
    elif MODE == "wrong_type":
        send({"id": rid, "move": "pass"})
        return True
    elif MODE == "illegal":
        send({"id": rid, "action": {"type": "take_puzzle", "color": "white", "slot": 9}})
        return True
    elif MODE == "flood_stdout":
        chunk = "x" * 65536
        while True:
            sys.stdout.write(chunk)
    elif MODE == "flood_stderr":
        chunk = "e" * 65536 + "\n"
        for _ in range(64):
            sys.stderr.write(chunk)
        sys.stderr.flush()
    elif MODE == "fork":
        for _ in range(4):
            if os.fork() == 0:
                os.setpgid(0, 0) if ARG == "escape" else None
                time.sleep(3600)
                os._exit(0)
    elif MODE == "forkmany":
        made = 0
        for _ in range(100):
            try:
                pid = os.fork()
            except OSError:
                break
            if pid == 0:
                time.sleep(3600)
                os._exit(0)
            made += 1
        print(f"forked {made}", file=sys.stderr, flush=True)
    elif MODE == "close_stdout":
        sys.stdout.flush()
        os.close(1)
        time.sleep(3600)
    elif MODE == "alloc":
        hoard = []
        while True:
            hoard.append(bytearray(16 << 20))
            hoard[-1][::4096] = b"x" * len(hoard[-1][::4096])
    elif MODE == "socket":
        try:
            socket.create_connection(("127.0.0.1", int(ARG)), timeout=1).sendall(b"reached\n")
            print("socket: connected", file=sys.stderr)
        except OSError as exc:
            print(f"socket: {exc}", file=sys.stderr)
    return False


def burn():
    while True:
        pass


def main():
    if MODE == "ponder":
        import threading
        threading.Thread(target=burn, daemon=True).start()
    if MODE == "slow_start":
        time.sleep(float(ARG or 30))
    first = True
    for line in sys.stdin:
        msg = json.loads(line)
        kind = msg["type"]
        if kind == "quit":
            return
        if kind == "hello":
            send({"type": "ready", "id": msg["id"], "name": f"misbehave-{MODE}", "version": "0", "legal_actions": True})
            continue
        if kind == "game_over":
            continue
        if first or MODE in ("illegal", "garbage", "wrong_id"):
            first = False
            if misbehave(msg):
                continue
        if MODE == "slow":
            time.sleep(float(ARG))
        reply = {"id": msg["id"], "action": msg["legal"][0] if msg.get("legal") else {"type": "pass"}}
        send(reply)
        if MODE == "stale":
            send(reply)


if __name__ == "__main__":
    main()
