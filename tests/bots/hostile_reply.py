"""A protocol bot that answers one request with bytes chosen by the test, for the reply tests.

``python tests/bots/hostile_reply.py HEX [WHEN]``: it answers the handshake properly, then
writes the bytes ``HEX`` (hexadecimal; ``{id}`` in them becomes the request's id) as its
reply to request number ``WHEN`` (1: the first request after ``hello``, the default; 0:
``hello`` itself); every other request gets its first legal option. It imports nothing
from the project, so it starts fast.
"""

import json
import sys

LINE = bytes.fromhex(sys.argv[1])
WHEN = int(sys.argv[2]) if len(sys.argv) > 2 else 1


def write(data: bytes) -> None:
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()


def main() -> None:
    count = 0
    for line in sys.stdin.buffer:
        msg = json.loads(line)
        kind = msg["type"]
        if kind == "quit":
            return
        if kind == "game_over":
            continue
        if count == WHEN:
            write(LINE.replace(b"{id}", str(msg["id"]).encode()) + b"\n")
        elif kind == "hello":
            write(json.dumps({"type": "ready", "id": msg["id"], "name": "hostile", "legal_actions": True}).encode() + b"\n")
        else:
            write(json.dumps({"id": msg["id"], "action": msg["legal"][0]}).encode() + b"\n")
        count += 1


if __name__ == "__main__":
    main()
