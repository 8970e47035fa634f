"""What wraps every answer of the site: its security headers, the public response cache, and
the pages of the errors Starlette raises (404, 405, a bad request).

Every response carries the headers of :class:`.security.SecurityHeaders` (a page that sets
no Content-Security-Policy gets :data:`PAGE_POLICY`), and an unexpected exception becomes a
plain 500 without a traceback; public ``GET`` answers are kept ``cache_ttl_s`` seconds by
:class:`.cache.ResponseCache`. An error under ``/api/`` is JSON, ``{"error": sentence}``;
elsewhere it is a page of the site.
"""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response

from . import pages
from .cache import ResponseCache
from .security import SecurityHeaders, page_policy

#: Every page of the site: its one style sheet, no script at all.
PAGE_POLICY = page_policy(styles=(pages.CSS,))


async def http_error(request: Request, exc: HTTPException) -> Response:
    """The answer to an :class:`HTTPException`: JSON under ``/api/``, a page elsewhere."""
    if request.url.path.startswith("/api/"):
        return JSONResponse({"error": str(exc.detail)}, status_code=exc.status_code, headers=exc.headers)
    title = {404: "Not found", 405: "Method not allowed"}.get(exc.status_code, "Bad request")
    return HTMLResponse(pages.error_page(title, str(exc.detail)), status_code=exc.status_code)


#: The site's exception handlers.
EXCEPTION_HANDLERS = {HTTPException: http_error}


def middleware(cache_ttl_s: float = 2.0) -> list[Middleware]:
    """The site's middleware, outermost first: the security headers around the response cache."""
    return [Middleware(SecurityHeaders, default_policy=PAGE_POLICY), Middleware(ResponseCache, ttl_s=cache_ttl_s)]
