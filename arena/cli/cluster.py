"""``arena cluster status|clean``: what the arena keeps on a Dask cluster's workers, and removing what dead runs left."""

from __future__ import annotations

import typer

from .app import app, emit_json, guarded
from ..errors import UsageError

cluster_app = typer.Typer(help="A Dask cluster's workers: what runs left on them (status) and removing it (clean).",
                          no_args_is_help=True)
app.add_typer(cluster_app, name="cluster")


def cluster_command(name: str):
    """``@cluster_app.command`` with the CLI's error handling."""

    def deco(fn):
        return cluster_app.command(name)(guarded(fn))

    return deco


def _client(address: str):
    try:
        from distributed import Client
    except ImportError:
        raise UsageError("the cluster commands need dask[distributed]: pip install 'project-l-arena[cluster]'") from None
    try:
        return Client(address, timeout="10s", set_as_default=False)
    except (OSError, TimeoutError) as exc:
        raise UsageError(f"cannot reach the dask scheduler at {address} ({exc})") from None


@cluster_command("status")
def cluster_status_cmd(
    address: str = typer.Argument(..., help="The scheduler, e.g. tcp://scheduler:8786."),
    as_json: bool = typer.Option(False, "--json", help="Print as JSON."),
) -> None:
    """Each worker (and its name): the sandbox tier `auto` gives there (strict where its
    bubblewrap works) and why not strict, and every run's bot processes, bundles and
    lease (a run whose coordinator is gone lapses after its lease; `arena cluster clean`
    removes it at once)."""
    from ..cluster.worker import worker_status

    with _client(address) as client:
        found = client.run(worker_status)
    if as_json:
        emit_json(found)
        return
    if not found:
        typer.echo(f"{address}: no workers")
        return
    for worker, st in sorted(found.items()):
        why = f" (not strict: {st['not_strict']})" if st["tier"] != "strict" and st["not_strict"] else ""
        name = f" ({st['name']})" if st.get("name") and st["name"] != worker else ""
        typer.echo(f"{worker}{name}: sandbox {st['tier']}{why}; {len(st['runs'])} arena run(s)")
        for run in st["runs"]:
            state = "lapsed" if run["lapsed"] else f"idle {run['idle_s']:g} s of its {run['lease_s']:g} s lease"
            typer.echo(f"  {run['run']}: {run['games_playing']} game(s) playing, {run['bot_processes']} idle bot "
                       f"process(es), {run['bundles']} bundle(s); {state}")


@cluster_command("clean")
def cluster_clean_cmd(
    address: str = typer.Argument(..., help="The scheduler, e.g. tcp://scheduler:8786."),
    everything: bool = typer.Option(False, "--all", help="Remove every run's bots and bundles, also of runs "
                                                         "whose lease holds (only when no coordinator plays)."),
) -> None:
    """Remove what runs whose coordinators are gone left on the workers: their bot processes
    end, their bundles and folders go, and the scheduler forgets their plugins (a worker
    that joins later does not get them)."""
    from ..cluster.worker import LEASE_KEY, clean_worker, lease_lapsed, stamp_lease

    with _client(address) as client:
        gone = client.run(clean_worker, everything)
        stamps = client.get_metadata([LEASE_KEY], default=None) or {}
        dropped = {name for names in gone.values() for name in names}
        forgot = []
        for name in _registered_runs(client):
            stamp = stamps.get(name) if isinstance(stamps, dict) else None
            # a run whose coordinator still stamps its lease stays (unless --all)
            if everything or lease_lapsed(stamp) or (stamp is None and name in dropped):
                try:
                    client.unregister_worker_plugin(name)
                except Exception:  # a worker had already dropped it: the scheduler forgot it all the same
                    pass
                stamp_lease(client, name, None)
                forgot.append(name)
    total = sum(len(v) for v in gone.values())
    for worker, names in sorted(gone.items()):
        for name in names:
            typer.echo(f"{worker}: removed {name}")
    for name in forgot:
        typer.echo(f"scheduler: forgot {name} (workers that join do not get it)")
    typer.echo(f"removed {total} run(s) from {len(gone)} worker(s); the scheduler forgot {len(forgot)}")


def _registered_runs(client) -> list[str]:
    """The arena runs whose worker plugins the scheduler holds (and gives every worker that joins)."""

    def names(dask_scheduler=None):  # defined here: it travels by value (the scheduler need not have the arena)
        return sorted(n for n in dask_scheduler.worker_plugins if str(n).startswith("arena-run-"))

    return client.run_on_scheduler(names)
