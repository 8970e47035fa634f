"""``arena serve``, ``arena submit`` and ``arena league token new|list``: the league website."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Optional

import typer

from .app import command, guarded
from .league import league_app
from ..errors import ArenaError, UsageError

token_app = typer.Typer(help="Authors' submission tokens: new, list.", no_args_is_help=True)
league_app.add_typer(token_app, name="token")


@token_app.command("new")
@guarded
def token_new_cmd(
    file: Path = typer.Argument(..., help="The league file."),
    author: str = typer.Argument(..., help="The author the token belongs to (letters, digits, . _ + -)."),
) -> None:
    """Make a submission token for AUTHOR and print it once (only its hash is stored).

    A new token for the same author replaces the old one. Give it to the author, who
    submits with `arena submit PATH --server URL --token TOKEN`."""
    from ..web import store

    with store.open_league(file) as league:
        token = store.new_token(league, author)
    typer.echo(token)
    typer.echo(f"(the token of {author} for {file}; it is shown only now and replaces any earlier one)", err=True)


@token_app.command("list")
@guarded
def token_list_cmd(file: Path = typer.Argument(..., help="The league file.")) -> None:
    """List the authors holding a token (the tokens themselves are not stored)."""
    from ..web import store

    with store.open_league(file) as league:
        names = store.authors(league)
    typer.echo("\n".join(names) if names else "no tokens yet: `arena league token new FILE AUTHOR`")


@command("serve")
def serve_cmd(
    file: Path = typer.Argument(..., help="The league file to serve and play."),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on (keep 127.0.0.1 behind a reverse proxy)."),
    port: int = typer.Option(8000, "--port", min=0, max=65535, help="Port to listen on."),
    concurrency: int = typer.Option(2, "--concurrency", "-j", min=1, help="League games at once."),
    play: bool = typer.Option(True, "--play/--no-play", help="Play league games in the background."),
    build_sandbox: str = typer.Option("strict", "--build-sandbox",
                                      help="Sandbox tier of builds and conformance checks: strict (advised), basic, none."),
    build_timeout: float = typer.Option(300, "--build-timeout", min=1, help="Time limit of a build, in seconds."),
    check_timeout: float = typer.Option(300, "--check-timeout", min=1, help="Time limit of a conformance check, in seconds."),
    max_upload_kib: int = typer.Option(5120, "--max-upload-kib", min=1, help="Largest package archive accepted, in KiB."),
) -> None:
    """Serve the league's website and play its games continuously.

    Pages: the leaderboard, a page per bot (versions, rating over time, games, faults),
    a page per game with its replay, the rules, and an upload form; a JSON API takes
    submissions from authors holding a token (`arena league token new`). Each submission
    is unpacked safely, built and checked in the sandbox, and enters the ladder if it
    passes. Stop with Ctrl-C (or kill it): games in flight are dropped, never
    half-stored, and the next start plays on with new games; nothing stored is lost or
    played twice. See docs/leagues.md, "Running a public league"."""
    try:
        import uvicorn

        from ..web.app import create_app
    except ImportError as exc:
        raise UsageError(f"arena serve needs the web extra ({exc.name} is missing): "
                         f"pip install 'project-l-arena[web]'") from None
    from dataclasses import replace

    from ..process.sandbox import TIERS
    from ..web.submissions import Settings

    if build_sandbox not in TIERS:
        raise UsageError(f"--build-sandbox {build_sandbox!r}: give one of {', '.join(TIERS)}")
    settings = Settings(tier=build_sandbox, build_timeout_s=build_timeout, check_timeout_s=check_timeout)
    settings = replace(settings, caps=replace(settings.caps, archive_bytes=max_upload_kib << 10))
    app = create_app(file, settings, play=play, concurrency=concurrency)
    typer.echo(f"serving {file} on http://{host}:{port}/ (Ctrl-C stops)", err=True)
    uvicorn.run(app, host=host, port=port, log_level="warning", proxy_headers=True)


def _http(method: str, url: str, data: bytes | None = None, headers: dict | None = None) -> tuple[int, dict]:
    import urllib.error
    import urllib.request

    req = urllib.request.Request(url, data=data, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            return resp.status, json.loads(resp.read() or b"{}")
    except urllib.error.HTTPError as exc:
        try:
            body = json.loads(exc.read() or b"{}")
        except ValueError:
            body = {}
        return exc.code, body if isinstance(body, dict) else {}
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise UsageError(f"cannot reach {url} ({reason})") from None
    except ValueError:
        raise UsageError(f"{url} did not answer with JSON; is it an `arena serve` server?") from None


@command("submit")
def submit_cmd(
    path: Path = typer.Argument(..., help="A bot package: a folder with bot.toml, or a .zip / .tar.gz of one."),
    server: str = typer.Option(..., "--server", help="The league website, e.g. https://league.example.org."),
    token: Optional[str] = typer.Option(None, "--token", envvar="ARENA_TOKEN",
                                        help="Your submission token (or the environment variable ARENA_TOKEN)."),
    keep_previous: bool = typer.Option(False, "--keep-previous",
                                       help="Keep your previous version playing (default: it is retired)."),
    wait: bool = typer.Option(False, "--wait", help="Wait for the build and check, print the verdict; "
                                                    "exit 1 if the bot was not accepted."),
) -> None:
    """Pack a bot package and upload it to a league website; print where to watch it.

    The server unpacks it, runs its build and the conformance check in the sandbox, and
    puts it into the ladder if it passes. The package format is in docs/writing-a-bot.md."""
    from ..web.package import pack

    if not token:
        raise UsageError("give --token TOKEN (or set ARENA_TOKEN); the league's operator makes one with "
                         "`arena league token new LEAGUE AUTHOR`")
    data, name = pack(path)
    base = server.rstrip("/")
    query = "?keep_previous=1" if keep_previous else ""
    status, out = _http("POST", f"{base}/api/submissions{query}", data,
                        {"Authorization": f"Bearer {token}", "Content-Type": "application/octet-stream",
                         "X-Filename": name})
    if status != 202:
        raise UsageError(f"{base} refused {path}: {out.get('error') or f'HTTP {status}'}")
    typer.echo(f"submitted {out['entry']} as submission #{out['id']}; watch it at {out['url']}")
    if not wait:
        return
    while out.get("status") in ("queued", "building", "checking"):
        time.sleep(2)
        status, out = _http("GET", f"{base}/api/submissions/{out['id']}")
        if status != 200:
            raise ArenaError(f"{base}: submission #{out.get('id')} could not be read (HTTP {status})")
    typer.echo(f"{out['status']}: {out.get('verdict') or ''}")
    if out["status"] != "accepted":
        raise typer.Exit(1)
