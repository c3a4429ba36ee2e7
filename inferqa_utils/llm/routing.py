"""Which backend serves a model: routing to OpenAI-compatible servers from the environment.

* ``INFERQA_LLM_SERVER=http://host:port`` sends every model to that server; the served model
  id is the registry name.
* ``INFERQA_LLM_SERVERS=name=url,name2=url2#served-id`` routes the named models (it wins over
  ``INFERQA_LLM_SERVER`` for them); ``#served-id`` sends another model id than the name.
* ``INFERQA_LLM_API_KEY`` is the bearer token (never recorded anywhere);
  ``INFERQA_LLM_CONCURRENCY`` (default 8) and ``INFERQA_LLM_RETRIES`` (default 4) tune the client.

Embedding models are routed the same way by their own variables (an LLM server rarely serves the
embedding model): ``INFERQA_EMBED_SERVER``, ``INFERQA_EMBED_SERVERS=name=url[#served-id],…``,
``INFERQA_EMBED_API_KEY`` (default: ``INFERQA_LLM_API_KEY``), ``INFERQA_EMBED_CONCURRENCY``
(default 4) and ``INFERQA_EMBED_RETRIES`` (default 4); see :func:`embed_route`.

:func:`backend_record` / :func:`embed_backend_record` are what a run manifest stores per model:
the backend, and for a server its URL (user and password removed) and served model id. Error
messages never show credentials written into a URL (:func:`redact_credentials`), and
:func:`is_loopback` tells whether a bearer token sent over plain ``http://`` stays on this machine.
"""

from __future__ import annotations

import ipaddress
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

SERVER_ENV = "INFERQA_LLM_SERVER"
SERVERS_ENV = "INFERQA_LLM_SERVERS"
API_KEY_ENV = "INFERQA_LLM_API_KEY"
CONCURRENCY_ENV = "INFERQA_LLM_CONCURRENCY"
RETRIES_ENV = "INFERQA_LLM_RETRIES"
EMBED_SERVER_ENV = "INFERQA_EMBED_SERVER"
EMBED_SERVERS_ENV = "INFERQA_EMBED_SERVERS"
EMBED_API_KEY_ENV = "INFERQA_EMBED_API_KEY"
EMBED_CONCURRENCY_ENV = "INFERQA_EMBED_CONCURRENCY"
EMBED_RETRIES_ENV = "INFERQA_EMBED_RETRIES"


@dataclass(frozen=True)
class Route:
    """A model bound to a server: ``url`` (no ``/v1``), the served model id and where it came from."""

    url: str
    model: str
    source: str


def check_url(url: str, where: str) -> str:
    """``url`` without a trailing ``/`` or ``/v1``; a ValueError naming ``where`` unless it is http(s)."""
    u = url.strip().rstrip("/")
    if u.endswith("/v1"):
        u = u[:-3]
    parts = urlsplit(u)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"{where}: {redact_credentials(url)!r} is not an http(s) URL (expected e.g. "
                         "http://127.0.0.1:8080)")
    return u


def split_served(url: str, name: str, where: str) -> tuple[str, str]:
    """``"http://h:p#served-id"`` → (checked URL, served id); no ``#`` → (URL, ``name``)."""
    url, _, served = url.partition("#")
    return check_url(url, where), served.strip() or name


def parse_servers(text: str, var: str = SERVERS_ENV) -> dict[str, tuple[str, str]]:
    """``INFERQA_LLM_SERVERS`` (or the variable ``var``) → {registry name: (URL, served id)}; a
    ValueError on a malformed entry."""
    out: dict[str, tuple[str, str]] = {}
    for item in (s.strip() for s in text.split(",")):
        if not item:
            continue
        name, eq, url = item.partition("=")
        if not eq or not name.strip() or not url.strip():
            raise ValueError(f"{var}: entry {redact_credentials(item)!r} must look like "
                             "name=http://host:port[#served-id]")
        out[name.strip()] = split_served(url, name.strip(), f"{var} entry {name.strip()!r}")
    return out


def server_route(name: str, environ: Mapping[str, str] | None = None, single: str = SERVER_ENV,
                 mapping: str = SERVERS_ENV) -> Route | None:
    """The server that ``name`` goes to under the environment, or ``None`` (in process): the entry
    of the ``mapping`` variable naming it, else the ``single`` variable's server."""
    env = os.environ if environ is None else environ
    mapped = parse_servers(env.get(mapping, ""), mapping)
    if name in mapped:
        url, served = mapped[name]
        return Route(url, served, mapping)
    if env.get(single, "").strip():
        url, served = split_served(env[single], name, single)
        return Route(url, served, single)
    return None


def embed_route(name: str, environ: Mapping[str, str] | None = None) -> Route | None:
    """The embedding server that model ``name`` goes to (``INFERQA_EMBED_SERVERS``, else
    ``INFERQA_EMBED_SERVER``), or ``None`` (encoded in process)."""
    return server_route(name, environ, EMBED_SERVER_ENV, EMBED_SERVERS_ENV)


def public_url(url: str) -> str:
    """``url`` as safe to record: without user, password, query or fragment."""
    p = urlsplit(url)
    host = p.hostname or ""
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    netloc = f"{host}:{p.port}" if p.port else host
    return urlunsplit((p.scheme, netloc, p.path, "", ""))


#: ``scheme://user:password@`` in free text (the user information of a URL, up to its last ``@``)
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/?#\s'\"]*@")
#: query parameters that carry a secret (``?token=…``, ``&api_key=…``)
_SECRET_QUERY = re.compile(
    r"(?i)([?&](?:token|api[_-]?key|key|password|passwd|secret|access_token)=)[^&#\s'\"]*"
)


def redact_credentials(text: str) -> str:
    """``text`` with the user and password of every URL in it replaced by ``***`` (and secret query
    parameters such as ``?token=…`` blanked), for error messages and log lines."""
    return _SECRET_QUERY.sub(r"\1***", _USERINFO.sub(r"\1***@", str(text)))


def is_loopback(url: str) -> bool:
    """Whether ``url``'s host is this machine (``localhost``, ``127.0.0.0/8``, ``::1``)."""
    host = (urlsplit(url).hostname or "").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def backend_record(name: str, environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """What serves ``name`` under the environment, as a manifest records it (no API key):
    ``{"backend": "server", "url": ..., "model": served id, "via": env var}`` or ``{"backend":
    "llamacpp"}``."""
    route = server_route(name, environ)
    if route is None:
        return {"backend": "llamacpp"}
    return {"backend": "server", "url": public_url(route.url), "model": route.model, "via": route.source}


def backend_records(
    names: Iterable[str], environ: Mapping[str, str] | None = None
) -> dict[str, dict[str, Any]]:
    """:func:`backend_record` of each name (sorted, once)."""
    return {n: backend_record(n, environ) for n in sorted(set(names))}


def embed_backend_record(name: str, environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """What encodes embedding model ``name`` under the environment, as a manifest records it (no
    API key): ``{"backend": "server", "url": ..., "model": served id, "via": env var}`` or
    ``{"backend": "in-process"}``."""
    route = embed_route(name, environ)
    if route is None:
        return {"backend": "in-process"}
    return {"backend": "server", "url": public_url(route.url), "model": route.model, "via": route.source}


def embed_backend_records(names: Iterable[str],
                          environ: Mapping[str, str] | None = None) -> dict[str, dict[str, Any]]:
    """:func:`embed_backend_record` of each name (sorted, once)."""
    return {n: embed_backend_record(n, environ) for n in sorted(set(names))}


def env_int(var: str, default: int, minimum: int = 0) -> int:
    """Integer environment variable ``var`` (``default`` when unset); a ValueError below ``minimum``."""
    raw = os.environ.get(var, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ValueError(f"{var}={raw!r} is not an integer") from None
    if value < minimum:
        raise ValueError(f"{var}={value} must be at least {minimum}")
    return value
