"""What a game needs on a cluster's worker: its files come back in its record, and the
folders of its command-line bots travel as content-hashed bundles, scattered once."""

from __future__ import annotations

from typing import Callable


class Shipper:
    """Turns a local payload into a cluster one: files come back, and command-line bots'
    folders are bundled (once each) and scattered to the cluster. The sandbox travels as the
    run asked for it: each worker decides what ``auto`` gives there."""

    def __init__(self, client):
        from ..packages.bundle import Bundler

        self.client = client
        self.bundler = Bundler()
        self.futures: dict[str, object] = {}
        #: blocks until the scheduler has a worker again (set by DaskExecutor.run)
        self.wait_for_workers: Callable[[], int] = lambda: 1

    def prepare(self, payload: dict, plugin: str) -> tuple[dict, dict]:
        request = dict(payload["request"])
        seats = request.get("seats") or []
        bundled, needed = [], {}
        from ..packages.bundle import folder_bundle, program_folder

        for i, seat in enumerate(seats):
            if seat.get("cmd"):
                # the command travels as typed (its paths anchored); the folders it needs go
                # as bundles: its program's, and those it declared
                wheres = [program_folder(list(seat["cmd"]))] if not seat.get("program_dir") else []
                wheres += [folder_bundle(f) for f in [seat.get("program_dir"), *(seat.get("read_only") or ())] if f]
                for where in wheres:
                    bundle = self.bundler.for_folder(where)
                    if bundle is not None:
                        bundled.append((i, bundle.digest, bundle.folder))
                        needed[bundle.digest] = self._future(bundle)
        request["return_files"] = True
        return {**payload, "request": request, "plugin": plugin, "bundled": bundled}, needed

    def _future(self, bundle):
        fut = self.futures.get(bundle.digest)
        if fut is None:
            # held by one worker, fetched from it by the others; lost with it, it is scattered
            # again and the games that needed it are rescheduled (see :class:`arena.cluster.executor.DaskExecutor`)
            while True:
                try:
                    fut = self.client.scatter(bundle.data, hash=False)
                    break
                except TimeoutError as exc:  # every worker left: it goes when one is back
                    if "no valid workers" not in str(exc).lower():
                        raise
                    self.wait_for_workers()
            self.futures[bundle.digest] = fut
        return fut

    def lost(self) -> None:
        """A bundle was lost with its workers: scatter every bundle again when next needed."""
        self.release()

    def release(self) -> None:
        for fut in self.futures.values():
            try:
                fut.release()
            except Exception:  # the connection may be gone already
                pass
        self.futures = {}
