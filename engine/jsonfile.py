"""Reading a JSON file the rules name (a deal, a replay) with a sentence for each failure."""

from __future__ import annotations

import json
from pathlib import Path


def read_json_file(path, error: type[Exception], what: str):
    """Parse the JSON file ``path``; failures raise ``error`` with a sentence naming the file."""
    path = Path(path)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise error(f"{path}: cannot read the {what} ({exc.strerror})") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        detail = f"{exc.msg} at line {exc.lineno}" if isinstance(exc, json.JSONDecodeError) else "not UTF-8 text"
        raise error(f"{path}: the {what} is not valid JSON ({detail})") from None
