"""A protocol bot that hides memory where a poll of resident memory does not look.

``python tests/bots/memfd_hog.py MODE MB``: it answers the handshake, then on its first
request puts ``MB`` megabytes where no page of it is mapped, writes on stderr one line
``HOG {"written_mb": N, "error": ...}`` per 64 MB and at the end, and plays the first legal
option until the game ends. It imports nothing from the project, so it starts fast.

Modes:

- ``memfd``: writes into ``memfd_create`` files of 16 MB each, never mapped, kept open.
- ``tmpfs``: writes into files of ``/tmp`` (a folder in memory), kept.
"""

import json
import os
import sys

MODE = sys.argv[1] if len(sys.argv) > 1 else "memfd"
MB = int(sys.argv[2]) if len(sys.argv) > 2 else 600
CHUNK = b"x" * (1 << 20)


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def report(written, error=None):
    print("HOG " + json.dumps({"written_mb": written, "error": error}), file=sys.stderr, flush=True)


def hoard():
    kept, written = [], 0
    try:
        while written < MB:
            if written % 16 == 0:
                if MODE == "memfd":
                    kept.append(os.memfd_create(f"hoard{written}", 0))
                else:
                    kept.append(os.open(f"/tmp/hoard{written}", os.O_CREAT | os.O_WRONLY, 0o600))
            os.write(kept[-1], CHUNK)
            written += 1
            if written % 64 == 0:
                report(written)
    except OSError as exc:
        report(written, type(exc).__name__)
        return kept
    report(written)
    return kept


def main():
    first, kept = True, []
    for line in sys.stdin:
        msg = json.loads(line)
        kind = msg["type"]
        if kind == "quit":
            return
        if kind == "hello":
            send({"type": "ready", "id": msg["id"], "name": f"memfd-hog-{MODE}", "version": "0",
                  "legal_actions": True})
            continue
        if kind == "game_over":
            continue
        if first:
            first = False
            kept = hoard()
        send({"id": msg["id"], "action": msg["legal"][0] if msg.get("legal") else {"type": "pass"}})
    del kept


if __name__ == "__main__":
    main()
