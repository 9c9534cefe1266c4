"""One HTTP request through the official client's own urllib3 pool, addressed and authorised as its ApiClient does.

The client's request path builds the same request in four layers (ApiClient.param_serialize, which sanitizes
every header and query value; RESTClientObject.request, which picks a body encoding by matching the content type
with regular expressions and json.dumps the body; PoolManager.urlopen, which parses the URL again and looks the
pool up by a normalised key; then the connection pool): about half of a request's CPU on the client side. Here
the URL is the configuration's host and the resource path with the query quoted as param_serialize quotes it,
the headers are the ApiClient's default headers (its User-Agent) and what its `update_params_for_auth` adds
(a bearer token, refreshed by the configuration's hook as before), the body comes encoded, and the request goes
to the connection pool of the client's PoolManager for that host (through the manager itself when it is a proxy
manager). TLS, client certificates, socket options, pool size and connection retries are the pool's, set by
the client from the configuration. Every request is counted by verb when the ApiClient counts
(engine.kube.metrics).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

import urllib3

from engine.kube.metrics import CountingApiClient
from engine.kube.sdk import ApiClient

__all__ = ["JSON", "Wire", "query_string"]

JSON = "application/json"
AUTH = ["BearerToken"]  # the only auth setting of the client's configuration


def query_string(query: Mapping[str, str] | None) -> str:
    """`?k=v&...` as the client's ApiClient writes it (values quoted, `/` kept), or "" when there is no query."""
    if not query:
        return ""
    return "?" + "&".join(f"{name}={quote(str(value))}" for name, value in query.items())


class Wire:
    """Sends requests to the server of `api_client`'s configuration; answers come back unread (urllib3 responses)."""

    def __init__(self, api_client: ApiClient) -> None:
        self.api_client = api_client
        self.host = str(api_client.configuration.host or "")
        self._manager: urllib3.PoolManager = api_client.rest_client.pool_manager
        self._direct = type(self._manager) is urllib3.PoolManager  # a proxy manager rewrites requests: through it
        self._prefix = urllib3.util.parse_url(self.host).path or ""  # a server behind a path: https://proxy/k8s/c-1
        self._pool: urllib3.HTTPConnectionPool | None = None
        self._counting = api_client if isinstance(api_client, CountingApiClient) else None

    def send(
        self,
        method: str,
        path: str,
        query: Mapping[str, str] | None,
        body: bytes | None,
        content_type: str | None,
        timeout: tuple[float, float | None],
    ) -> Any:
        """The answer (a urllib3 HTTPResponse, its body not read yet); urllib3's errors when there is none."""
        headers = {"Accept": JSON, **self.api_client.default_headers}
        if body is not None and content_type:
            headers["Content-Type"] = content_type
        if self.api_client.cookie:
            headers["Cookie"] = self.api_client.cookie
        self.api_client.update_params_for_auth(headers, [], AUTH, path, method, body)
        if self._counting is not None:
            self._counting.count_request(method, path, query, headers.get("Content-Type"))
        target = path + query_string(query)
        limits = urllib3.Timeout(connect=timeout[0], read=timeout[1])
        if not self._direct:
            return self._manager.urlopen(method, self.host + target, body=body, headers=headers, timeout=limits,
                                         preload_content=False, redirect=False)
        return self._connection_pool().urlopen(method, self._prefix + target, body=body, headers=headers,
                                               timeout=limits, preload_content=False, redirect=False,
                                               assert_same_host=False)

    def _connection_pool(self) -> urllib3.HTTPConnectionPool:
        """The manager's pool for the host, kept; asked for again once closed (the manager was cleared)."""
        pool = self._pool
        if pool is None or pool.pool is None:
            pool = self._pool = self._manager.connection_from_url(self.host)
        return pool
