"""The shared HTTP client for OpenAI-compatible endpoints: retries, timeouts and a query cache.

Used by the arena's vision chooser, the zoo's HTTP model plug and any family that
talks to a model server. Standard library only (``urllib``), so it works wherever
icmlgym installs.

- **Retries** after a 5xx, a 429, a timeout or a connection error, with
  exponential back-off (``backoff``, doubled each time); a 4xx other than 429 is
  the caller's mistake and is raised at once.
- **Cache.** Answers are cached by (URL, request body) in a namespace of the
  shared cache (:mod:`icmlgym.cache`), written atomically. With ``repeat=n`` the
  n-th identical request of a sampling client (temperature > 0) has its own entry,
  so repeats stay independent draws while a rerun replays them. Only answers the
  caller accepts are cached (:meth:`HTTPClient.store`).
- Nothing is ever fetched at import time; no request leaves without a call.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from icmlgym.cache import Cache, atomic_write_bytes


class HTTPClientError(RuntimeError):
    """A request failed: a refused 4xx, or every retry used up (the message says why)."""


class MalformedResponseError(HTTPClientError):
    """The server answered, but not with the JSON the protocol promises."""


class HTTPClient:
    """POSTs JSON to one URL with retries, a timeout per request and an optional answer cache.

    Args:
        url: the full endpoint URL (``http://`` or ``https://``).
        api_key: sent as ``Authorization: Bearer`` when given.
        timeout: seconds per request (> 0).
        max_retries: extra attempts after a retryable failure (>= 0).
        backoff: seconds before the first retry (>= 0), doubled each time.
        cache: a :class:`~icmlgym.cache.Cache`, a folder, or None (no cache).

    Raises:
        ValueError: a URL that is not http(s), or a bad timeout/retry setting.
    """

    def __init__(
        self,
        url: str,
        api_key: str | None = None,
        timeout: float = 30.0,
        max_retries: int = 3,
        backoff: float = 0.5,
        cache: Cache | str | os.PathLike | None = None,
    ) -> None:
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise ValueError(f"endpoint must be an http(s) URL, got {url!r}")
        if timeout <= 0 or max_retries < 0 or backoff < 0:
            raise ValueError(f"need timeout > 0, max_retries >= 0, backoff >= 0; got {timeout}, {max_retries}, {backoff}")
        self.url = url
        self.api_key = api_key or None
        self.timeout = float(timeout)
        self.max_retries = int(max_retries)
        self.backoff = float(backoff)
        if cache is None or isinstance(cache, Cache):
            self.cache_dir: Path | None = cache.dir if cache is not None else None
        else:
            self.cache_dir = Path(cache)
        self.requests_sent = 0  # HTTP requests actually made (retries included)
        self._repeats: dict[str, int] = {}

    # --------------------------------------------------------------- cache
    def key(self, body: dict[str, Any], repeat: bool = False) -> str:
        """The cache key of a request; with ``repeat`` each identical request gets the next key."""
        raw = json.dumps(body, sort_keys=True).encode()
        key = hashlib.sha256(self.url.encode() + b"\0" + raw).hexdigest()
        if repeat:
            n = self._repeats.get(key, 0)
            self._repeats[key] = n + 1
            key = hashlib.sha256(f"{key}:{n}".encode()).hexdigest()
        return key

    def _path(self, key: str) -> Path | None:
        return None if self.cache_dir is None else self.cache_dir / key[:2] / f"{key}.json"

    def cached(self, key: str) -> dict[str, Any] | None:
        """The cached entry of ``key`` (None when absent; a corrupt entry is dropped)."""
        path = self._path(key)
        if path is None or not path.is_file():
            return None
        try:
            return json.loads(path.read_text())
        except (json.JSONDecodeError, UnicodeDecodeError, OSError):
            path.unlink(missing_ok=True)
            return None

    def store(self, key: str, entry: dict[str, Any]) -> None:
        """Cache an accepted answer under ``key`` (atomically; no-op without a cache)."""
        path = self._path(key)
        if path is not None:
            atomic_write_bytes(path, json.dumps(entry).encode())

    def drop(self, key: str) -> None:
        path = self._path(key)
        if path is not None:
            path.unlink(missing_ok=True)

    # --------------------------------------------------------------- requests
    def post_json(self, body: dict[str, Any] | bytes) -> dict[str, Any]:
        """POST ``body`` (a dict, or JSON bytes) and return the decoded JSON answer (never cached here)."""
        data = body if isinstance(body, bytes) else json.dumps(body, sort_keys=True).encode()
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        last = ""
        for attempt in range(self.max_retries + 1):
            if attempt:
                time.sleep(self.backoff * 2 ** (attempt - 1))
            req = urllib.request.Request(self.url, data=data, headers=headers, method="POST")
            self.requests_sent += 1
            try:
                with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                    payload = resp.read()
            except urllib.error.HTTPError as err:
                detail = err.read()[:300].decode("utf-8", "replace")
                if err.code >= 500 or err.code == 429:
                    last = f"HTTP {err.code} from {self.url}: {detail}"
                    continue
                raise HTTPClientError(f"HTTP {err.code} from {self.url}: {detail}") from err
            except (TimeoutError, socket.timeout) as err:
                last = f"request to {self.url} timed out after {self.timeout} s ({err})"
                continue
            except urllib.error.URLError as err:
                if isinstance(err.reason, (TimeoutError, socket.timeout)):
                    last = f"request to {self.url} timed out after {self.timeout} s"
                else:
                    last = f"cannot reach {self.url}: {err.reason}"
                continue
            except (ConnectionError, OSError) as err:
                last = f"connection to {self.url} failed: {err}"
                continue
            try:
                return json.loads(payload)
            except json.JSONDecodeError as err:
                raise MalformedResponseError(f"response is not JSON: {payload[:200]!r}") from err
        raise HTTPClientError(f"gave up after {self.max_retries + 1} attempts: {last}")


def chat_url(endpoint: str) -> str:
    """``{endpoint}/chat/completions`` unless the endpoint already ends with it."""
    if not isinstance(endpoint, str) or not endpoint.startswith(("http://", "https://")):
        raise ValueError(f"endpoint must be an http(s) URL, got {endpoint!r}")
    endpoint = endpoint.rstrip("/")
    return endpoint if endpoint.endswith("/chat/completions") else endpoint + "/chat/completions"


def completions_url(endpoint: str) -> str:
    """``{endpoint}/completions`` unless the endpoint already ends with it."""
    if not isinstance(endpoint, str) or not endpoint.startswith(("http://", "https://")):
        raise ValueError(f"endpoint must be an http(s) URL, got {endpoint!r}")
    endpoint = endpoint.rstrip("/")
    return endpoint if endpoint.endswith("/completions") else endpoint + "/completions"


def message_text(data: dict[str, Any]) -> str:
    """The text of ``choices[0].message.content`` of a chat completion (content parts joined)."""
    try:
        content = data["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError) as err:
        raise MalformedResponseError(f"response has no choices[0].message.content: {str(data)[:200]}") from err
    if isinstance(content, list):  # some servers return content parts
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    if not isinstance(content, str):
        raise MalformedResponseError(f"message content is not text: {content!r}")
    return content


__all__ = ["HTTPClient", "HTTPClientError", "MalformedResponseError", "chat_url", "completions_url", "message_text"]
