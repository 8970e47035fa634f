"""``arena serve``, ``arena submit`` and ``arena league token new|list``: the league website."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated, Optional

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


# The options of `arena serve`, one alias each, so its signature reads as a list of names.
LeagueFile = Annotated[Path, typer.Argument(help="The league file to serve and play.")]
Host = Annotated[str, typer.Option("--host", help="Address to listen on (keep 127.0.0.1 behind a reverse proxy).")]
Port = Annotated[int, typer.Option("--port", min=0, max=65535, help="Port to listen on.")]
Concurrency = Annotated[int, typer.Option("--concurrency", "-j", min=1, help="League games at once.")]
Play = Annotated[bool, typer.Option("--play/--no-play", help="Play league games in the background.")]
Dask = Annotated[Optional[str], typer.Option(
    "--dask", metavar="ADDRESS",
    help="Play the background games on the Dask cluster of this scheduler (tcp://host:8786); see docs/cluster.md.")]
Pace = Annotated[float, typer.Option("--pace", min=0, help="League games per minute (0: as fast as the workers go).")]
LiveDelay = Annotated[int, typer.Option(
    "--live-delay", min=0, metavar="N",
    help="Show strangers a game in flight N moves behind (its full record once it ends).")]
PublicBuildLogs = Annotated[bool, typer.Option(
    "--public-build-logs", help="Show every submission's build log to everyone, not only to its author.")]
UnsafeSandbox = Annotated[Optional[str], typer.Option(
    "--unsafe-sandbox", metavar="TIER",
    help="Play submitted bots in a weaker sandbox tier than strict (basic or none): only for a private league.")]
UnsafeBuildSandbox = Annotated[Optional[str], typer.Option(
    "--unsafe-build-sandbox", metavar="TIER",
    help="Build and check submissions in a weaker tier than strict (basic or none): only for a private league.")]
BuildSandbox = Annotated[Optional[str], typer.Option("--build-sandbox", hidden=True)]
BuildTimeout = Annotated[float, typer.Option("--build-timeout", min=1, help="Time limit of a build, in seconds.")]
CheckTimeout = Annotated[float, typer.Option("--check-timeout", min=1,
                                             help="Time limit of a conformance check, in seconds.")]
BuildMemory = Annotated[int, typer.Option("--build-memory-mb", min=64,
                                          help="Memory of a build's or a check's whole process tree, in MiB.")]
MaxUpload = Annotated[int, typer.Option("--max-upload-kib", min=1, help="Largest package archive accepted, in KiB.")]
PerHour = Annotated[int, typer.Option("--submissions-per-hour", min=0,
                                      help="Submissions one author may make per hour (0: no limit).")]
Pending = Annotated[int, typer.Option(
    "--pending-per-author", min=0, help="Submissions of one author waiting or being built at once (0: no limit).")]
PublicUrl = Annotated[Optional[str], typer.Option(
    "--public-url", metavar="URL",
    help="Where visitors reach the site (https://league.example.org), for the links of API answers; "
         "default http://HOST:PORT.")]
MaxConnections = Annotated[int, typer.Option(
    "--max-connections", min=10,
    help="Connections held at once; beyond, a new one closes the idle connection of the biggest holder, or is "
         "refused if it is that holder.")]
PerClient = Annotated[int, typer.Option(
    "--per-client-connections", min=1,
    help="Connections one client address (an IPv6 /64) may hold; beyond, 429. A trusted proxy is not limited.")]
IdleTimeout = Annotated[float, typer.Option(
    "--idle-timeout", min=0.5, help="Seconds a connection may wait without sending a byte of a request.")]
HeaderTimeout = Annotated[float, typer.Option(
    "--header-timeout", min=1, help="Seconds a request head may take from its first byte to its end.")]
ForwardedAllowIps = Annotated[str, typer.Option(
    "--forwarded-allow-ips", metavar="ADDRESSES",
    help="Proxies whose X-Forwarded-For names the client (addresses or networks, comma-separated; * for any): "
         "keep it to your proxy.")]


@command("serve")
def serve_cmd(
    file: LeagueFile, host: Host = "127.0.0.1", port: Port = 8000, concurrency: Concurrency = 2, play: Play = True,
    dask: Dask = None, pace: Pace = 30.0, live_delay: LiveDelay = 0, public_build_logs: PublicBuildLogs = False,
    unsafe_sandbox: UnsafeSandbox = None, unsafe_build_sandbox: UnsafeBuildSandbox = None,
    build_sandbox: BuildSandbox = None, build_timeout: BuildTimeout = 300, check_timeout: CheckTimeout = 300,
    build_memory_mb: BuildMemory = 1024, max_upload_kib: MaxUpload = 5120, per_hour: PerHour = 10,
    pending: Pending = 2, public_url: PublicUrl = None, max_connections: MaxConnections = 500,
    per_client: PerClient = 32, idle_timeout: IdleTimeout = 5.0, header_timeout: HeaderTimeout = 10.0,
    forwarded_allow_ips: ForwardedAllowIps = "127.0.0.1,::1",
) -> None:
    """Serve the league's website and play its games continuously.

    Pages: the leaderboard, a page per bot (versions, rating over time, games, faults),
    a page per game with its replay, the rules, and an upload form; a JSON API takes
    submissions from authors holding a token (`arena league token new`). Each submission
    is unpacked safely, built and checked in the strict sandbox, and enters the ladder if
    it passes; its games are played in the strict sandbox too, whatever tier the league
    file names. Stop with Ctrl-C (or kill it): games in flight are dropped, never
    half-stored, and the next start plays on with new games; nothing stored is lost or
    played twice. See docs/leagues.md, "Running a public league"."""
    create_app = _web_app()
    tiers = _sandbox_tiers(build_sandbox, unsafe_sandbox, unsafe_build_sandbox, dask)
    settings = _settings(tiers, build_timeout_s=build_timeout, check_timeout_s=check_timeout,
                         build_memory_mb=build_memory_mb, submissions_per_hour=per_hour, pending_per_author=pending,
                         pace=pace, live_delay=live_delay, public_build_logs=public_build_logs,
                         max_upload_kib=max_upload_kib)
    limits = _connection_limits(max_connections, per_client, idle_timeout, header_timeout, forwarded_allow_ips)
    _end_leftovers(file)
    sock = _listen(host, port)
    port = sock.getsockname()[1]
    url = public_url or f"http://{host if ':' not in host else f'[{host}]'}:{port}"
    app = create_app(file, settings, play=play, concurrency=concurrency, dask=dask, public_url=url)
    _warn_weaker(tiers)
    typer.echo(f"serving {file} on http://{host}:{port}/ (Ctrl-C stops)", err=True)
    _run(app, limits, sock, file)


def _web_app():
    """``create_app`` of the web app, or a sentence saying the web extra is missing."""
    try:
        import uvicorn  # noqa: F401

        from ..web.app import create_app
    except ImportError as exc:
        raise UsageError(f"arena serve needs the web extra ({exc.name} is missing): "
                         f"pip install 'project-l-arena[web]'") from None
    return create_app


def _sandbox_tiers(build_sandbox: str | None, unsafe_sandbox: str | None, unsafe_build_sandbox: str | None,
                   dask: str | None) -> dict:
    """The tiers of ``--unsafe-sandbox`` (games) and ``--unsafe-build-sandbox`` (builds and
    checks), strict unless said otherwise; a sentence if one is unknown, or if strict is
    asked of this machine and it cannot give it."""
    from ..process.sandbox import TIERS, strict_missing

    if build_sandbox is not None and build_sandbox != "strict":
        raise UsageError(f"--build-sandbox {build_sandbox}: a public league builds in the strict tier; to build "
                         f"in a weaker one say so with --unsafe-build-sandbox {build_sandbox}")
    tiers = {}
    for option, value in (("--unsafe-sandbox", unsafe_sandbox), ("--unsafe-build-sandbox", unsafe_build_sandbox)):
        if value is not None and value not in TIERS:
            raise UsageError(f"{option} {value!r}: give one of {', '.join(TIERS)}")
        tiers[option] = value or "strict"
    # builds and checks run here; games run here too, or on the cluster's workers, which
    # decide their tier there: a worker that cannot give strict refuses the league's games,
    # unless --unsafe-sandbox names the tier it may fall back to
    here = [tiers["--unsafe-build-sandbox"]] + ([tiers["--unsafe-sandbox"]] if not dask else [])
    if "strict" in here:
        why = strict_missing()
        if why:
            raise UsageError(f"the strict sandbox cannot run on this machine: {why}; a public league needs it "
                             f"(for a private one, --unsafe-sandbox basic --unsafe-build-sandbox basic)")
    if dask and unsafe_sandbox is not None and unsafe_sandbox != "strict":
        tiers["--unsafe-sandbox"] = {"tier": "strict", "fallback": unsafe_sandbox}
    return tiers


def _settings(tiers: dict, max_upload_kib: int, **given):
    """The submissions' and games' settings of the serve options."""
    from dataclasses import replace

    from ..web.submissions import Settings

    settings = Settings(tier=tiers["--unsafe-build-sandbox"], game_tier=tiers["--unsafe-sandbox"], **given)
    return replace(settings, caps=replace(settings.caps, archive_bytes=max_upload_kib << 10))


def _end_leftovers(file: Path) -> None:
    """End what a killed server of ``file`` left behind, saying so (before the league file is
    opened: see arena/web/lifetime.py)."""
    from ..web.lifetime import end_leftovers

    ended = end_leftovers(file)
    if ended:
        typer.echo(f"arena: ended {len(ended)} process{'es' if len(ended) != 1 else ''} a killed server of {file} "
                   f"left behind (pids {', '.join(map(str, ended))})", err=True)


def _warn_weaker(tiers: dict) -> None:
    """Warn, once the app is built, of every tier weaker than strict."""
    weaker = [f"{o} {t['fallback'] if isinstance(t, dict) else t}" for o, t in tiers.items() if t != "strict"]
    if weaker:
        typer.echo(f"arena: warning: {' and '.join(weaker)}: submitted code can reach more than the strict "
                   f"sandbox allows; do not run a public league like this", err=True)


def _run(app, limits, sock, file: Path) -> None:
    """Serve ``app`` on ``sock`` until a stop signal; a sentence if the server did not start."""
    server = _Server(server_config(app, limits), app.state.stop_now)
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:  # the stop signal, raised again once the server has stopped
        pass
    if not server.started:
        raise ArenaError(f"the server of {file} did not start; its log above says why")


#: Seconds a stopping server gives requests in progress before it closes their connections.
STOP_GRACE_S = 3


def _connection_limits(max_connections: int, per_client: int, idle_s: float, head_s: float, trusted: str):
    """The connection limits of the serve options (see arena/web/connections.py)."""
    from ..web.connections import Limits, parse_trusted

    try:
        parse_trusted(trusted)
    except ValueError as exc:
        raise UsageError(f"--forwarded-allow-ips {trusted}: {exc}") from None
    return Limits(max_connections=max_connections, per_client=per_client, idle_s=idle_s, head_s=head_s,
                  trusted=trusted)


def server_config(app, limits):
    """The uvicorn configuration of ``arena serve``: its HTTP protocol holds ``limits``
    (arena/web/connections.py), so uvicorn's own cap, which answers 503 to everyone once
    reached, is off; ``X-Forwarded-*`` headers are believed from ``limits.trusted`` only."""
    import math

    import uvicorn

    from ..web.connections import protocol_class

    return uvicorn.Config(app, log_level="warning", http=protocol_class(limits), ws="none", proxy_headers=True,
                          forwarded_allow_ips=limits.trusted, limit_concurrency=None,
                          timeout_graceful_shutdown=STOP_GRACE_S, timeout_keep_alive=math.ceil(limits.idle_s))


def _listen(host: str, port: int):
    """The server's listening socket, bound before the league file is opened: a port in use
    is refused with a sentence and nothing else is touched."""
    import socket

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP, not 0: asyncio turns Nagle's algorithm off only for sockets that say TCP,
    # and with it on every answer written in two parts waits for a delayed ACK (40 ms)
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise UsageError(f"cannot listen on {host}:{port} ({exc.strerror}); is another server running there? "
                         f"choose another --port or stop it") from None
    sock.listen(2048)
    sock.set_inheritable(False)
    return sock


def _Server(config, stop_now):
    """A uvicorn server whose stop signal (SIGINT, SIGTERM) first stops the background play
    and builds at once, then gives requests :data:`STOP_GRACE_S` seconds."""
    import uvicorn

    class Server(uvicorn.Server):
        def handle_exit(self, sig, frame) -> None:
            stop_now()
            super().handle_exit(sig, frame)

    return Server(config)


def _http(method: str, url: str, data: bytes | None = None, headers: dict | None = None) -> tuple[int, dict]:
    from .http_client import json_request

    return json_request(method, url, data, headers)


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
    from ..packages.package import pack

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
        from .http_client import refusal

        raise UsageError(f"{base} refused {path}: {refusal(status, out)}")
    typer.echo(f"submitted {out['entry']} as submission #{out['id']}; watch it at {out['url']}")
    if not wait:
        return
    while out.get("status") in ("queued", "building", "checking"):
        time.sleep(2)
        sid = out["id"]
        status, out = _http("GET", f"{base}/api/submissions/{sid}")
        if status != 200:
            from .http_client import refusal

            raise ArenaError(f"{base}: submission #{sid} could not be read: {refusal(status, out)}")
    typer.echo(f"{out['status']}: {out.get('verdict') or ''}")
    if out["status"] != "accepted":
        raise typer.Exit(1)


@command("withdraw")
def withdraw_cmd(
    entry: str = typer.Argument(..., help="Your accepted version to withdraw, NAME@VERSION."),
    server: str = typer.Option(..., "--server", help="The league website, e.g. https://league.example.org."),
    token: Optional[str] = typer.Option(None, "--token", envvar="ARENA_TOKEN",
                                        help="Your submission token (or the environment variable ARENA_TOKEN)."),
) -> None:
    """Withdraw one of your versions from a league website: it stops playing; its games stay.

    The same as retiring it: the version keeps its games and rating in the table, marked
    withdrawn, and is no longer matched. Its name stays yours."""
    from .http_client import refusal

    if not token:
        raise UsageError("give --token TOKEN (or set ARENA_TOKEN)")
    base = server.rstrip("/")
    status, out = _http("POST", f"{base}/api/withdraw", json.dumps({"entry": entry}).encode(),
                        {"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    if status != 200:
        raise UsageError(f"{base} did not withdraw {entry}: {refusal(status, out)}")
    typer.echo(f"withdrew {out.get('entry', entry)}: it no longer plays; its games and rating stay")
