"""Submitting a bot package: the upload form (``/submit``) and ``POST /api/submissions``.

Who may upload, and how many, is asked before a byte of the body is read (an unknown
token is 401, a quota 429 with ``Retry-After``). A body is refused (413) beyond the package
size cap, is streamed into a file a chunk at a time (never held in memory whole), and at
most :data:`MAX_UPLOADS` are received at once (beyond, 503 before the body is read). An
accepted upload wakes the submissions' pipeline (:mod:`.submissions`), which builds and
checks it in the sandbox.
"""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from ..packages.package import PackageError
from . import pages, store, views
from .api import submission_json
from .reading import TooLarge, bearer, file_receive, over, spool_capped
from .security import scrub_sentence
from .state import SiteState, site_of
from .submissions import QuotaExceeded, check_quota, receive

#: Room for the form's other fields and its multipart framing around the archive.
FORM_OVERHEAD = 64 << 10
#: Upload bodies being received at once (each streamed to a file, never held in memory whole);
#: beyond, an upload is answered 503 before its body is read.
MAX_UPLOADS = 16
UNKNOWN_TOKEN = {"error": "unknown token: ask the league's operator for one (`arena league token new AUTHOR`)"}


def admit(site: SiteState, token: str | None) -> tuple[int, dict | str]:
    """Who may upload, asked before the body is read: ``(200, author)`` or a refusal."""
    with views.opened(site.path) as league:
        author = store.author_of(league, token)
        if author is None:
            return 401, dict(UNKNOWN_TOKEN)
        try:
            check_quota(league, author, site.settings)
        except QuotaExceeded as exc:
            return 429, {"error": str(exc), "retry_after": exc.retry_after}
    return 200, author


def accept(site: SiteState, token: str | None, data, keep_previous: bool) -> tuple[int, dict]:
    """Enter the upload ``data`` (bytes, or a spooled file read only now, one at a time) as a
    submission of the author of ``token``: ``(202, submission)`` or a refusal."""
    if not isinstance(data, bytes):
        data = data.read()
    with views.opened(site.path) as league:
        author = store.author_of(league, token)
        if author is None:
            return 401, dict(UNKNOWN_TOKEN)
        try:
            sub = receive(league, author, data, keep_previous, site.settings)
        except QuotaExceeded as exc:
            return 429, {"error": str(exc), "retry_after": exc.retry_after}
        except PackageError as exc:  # the author's own names are quoted in it: kept as written
            return 400, {"error": scrub_sentence(str(exc), site.hidden)}
    site.pipeline.wake.set()
    return 202, sub


def _retry(out: dict) -> dict:
    return {"Retry-After": str(max(1, int(out.get("retry_after") or 60)))}


def submit_form(request: Request) -> Response:
    """The upload form."""
    return HTMLResponse(pages.submit_page())


def _form_refusal(message: str, status: int, headers: dict | None = None) -> Response:
    return HTMLResponse(pages.submit_page(message), status_code=status, headers=headers)


async def submit_post(request: Request) -> Response:
    """Upload a package from the form (multipart: token, package, keep_previous)."""
    site = site_of(request)
    cap = site.archive_cap
    if site.uploading >= MAX_UPLOADS:
        return _form_refusal("The server is receiving many uploads; try again in a minute.", 503, {"Retry-After": "60"})
    site.uploading += 1
    spooled = None
    try:
        try:
            spooled = await spool_capped(request, cap + FORM_OVERHEAD, site.uploads_dir)
            form = await Request(request.scope, file_receive(spooled)).form(max_files=1, max_fields=4)
        except TooLarge:
            return _form_refusal(f"The upload is over the {cap >> 10} KiB limit.", 413)
        except Exception:  # a malformed multipart body
            return _form_refusal("The form could not be read; choose a file and try again.", 400)
        upload = form.get("package")
        if upload is None or isinstance(upload, str):
            return _form_refusal("Choose a package file.", 400)
        status, out = await run_in_threadpool(accept, site, str(form.get("token") or ""), upload.file,
                                              form.get("keep_previous") == "1")
    finally:
        site.uploading -= 1
        if spooled is not None:
            spooled.close()
    if status != 202:
        return _form_refusal(out["error"], status, _retry(out) if status == 429 else None)
    return RedirectResponse(f"/submission/{out['id']}", status_code=303)


async def api_submit(request: Request) -> Response:
    """Submit a package: the archive as the body, ``Authorization: Bearer TOKEN``, ``?keep_previous=1``."""
    site = site_of(request)
    cap, token = site.archive_cap, bearer(request)
    too_large = {"error": f"the archive is over the {cap >> 10} KiB limit"}
    if over(request, cap):
        return JSONResponse(too_large, status_code=413)
    # who and how many, before a byte of the body is read (``Expect: 100-continue`` is
    # answered with this refusal, and the body is never sent)
    status, who = await run_in_threadpool(admit, site, token)
    if status != 200:
        return JSONResponse(who, status_code=status, headers=_retry(who) if status == 429 else None)
    if site.uploading >= MAX_UPLOADS:
        return JSONResponse({"error": "the server is receiving many uploads; try again in a minute"},
                            status_code=503, headers={"Retry-After": "60"})
    site.uploading += 1
    spooled = None
    try:
        try:
            spooled = await spool_capped(request, cap, site.uploads_dir)
        except TooLarge:
            return JSONResponse(too_large, status_code=413)
        keep = request.query_params.get("keep_previous", "0") in ("1", "true", "yes")
        status, out = await run_in_threadpool(accept, site, token, spooled, keep)
    finally:
        site.uploading -= 1
        if spooled is not None:
            spooled.close()
    return JSONResponse(out if status != 202 else submission_json(site.base_url, out, site.public),
                        status_code=status, headers=_retry(out) if status == 429 else None)


routes = [
    Route("/submit", submit_form, methods=["GET"]), Route("/submit", submit_post, methods=["POST"]),
    Route("/api/submissions", api_submit, methods=["POST"]),
]
