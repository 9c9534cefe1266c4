"""One HTTP request through the official client's request path, addressed and authorised as its ApiClient does.

The client's `param_serialize` sanitizes every header and query value of every request, the most of a request's
CPU on the client side before the client's own REST layer: here the URL is the configuration's host and the
resource path with the query quoted as param_serialize quotes it, and the headers are the ApiClient's default
headers (its User-Agent), its cookie and what its `update_params_for_auth` adds (a bearer token, refreshed by the
configuration's hook as before). The request itself goes through `ApiClient.call_api` and the client's
RESTClientObject, pool, TLS, proxy, socket options and retries, as before. A server-side apply body goes encoded
(msgspec, engine.kube.codec: the client sends a body given as bytes as it is); a JSON body goes as a value, which
the client encodes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from engine.kube import codec
from engine.kube.sdk import ApiClient

__all__ = ["APPLY_PATCH", "JSON", "Wire", "query_string"]

JSON = "application/json"
APPLY_PATCH = "application/apply-patch+yaml"
AUTH = ["BearerToken"]  # the only auth setting of the client's configuration
_PLAIN = frozenset({str, int, float, bool, type(None)})


def query_string(query: Mapping[str, str] | None) -> str:
    """`?k=v&...` as the client's ApiClient writes it (values quoted, `/` kept), or "" when there is no query."""
    if not query:
        return ""
    return "?" + "&".join(f"{name}={quote(str(value))}" for name, value in query.items())


def plain_json(value: Any) -> bool:
    """Whether `value` is made of JSON's own types only (dicts with text keys, lists, text, numbers, booleans,
    None): then the client's JSON encoder takes it as it is. A loop over a stack, not a recursion: every status
    write asks it of an Instance's whole status."""
    stack = [value]
    pop, extend, plain = stack.pop, stack.extend, _PLAIN
    while stack:
        item = pop()
        kind = item.__class__
        if kind in plain:
            continue
        if kind is dict:
            for key in item:
                if key.__class__ is not str:
                    return False
            extend(item.values())
        elif kind is list or kind is tuple:
            extend(item)
        else:
            return False
    return True


class Wire:
    """Sends requests to the server of `api_client`'s configuration; answers come back unread (urllib3 responses)."""

    def __init__(self, api_client: ApiClient) -> None:
        self.api_client = api_client
        self.host = str(api_client.configuration.host or "")

    def payload(self, body: Any, content_type: str) -> Any:
        """What to hand the client for `body`: an apply body encoded, any other plain JSON as it is, the rest (a
        generated model) made plain JSON by the client's sanitizer."""
        sanitize = self.api_client.sanitize_for_serialization
        if content_type == APPLY_PATCH:
            return codec.encode(body, sanitize)
        return body if plain_json(body) else sanitize(body)  # type: ignore[no-untyped-call]

    def send(
        self,
        method: str,
        path: str,
        query: Mapping[str, str] | None,
        payload: Any,
        content_type: str | None,
        timeout: tuple[float, float | None],
    ) -> Any:
        """The answer (a urllib3 HTTPResponse, its body not read yet) to `payload` (from `payload()`); the client's
        and urllib3's errors when there is none."""
        headers = {"Accept": JSON, **self.api_client.default_headers}
        if payload is not None and content_type:
            headers["Content-Type"] = content_type
        if self.api_client.cookie:
            headers["Cookie"] = self.api_client.cookie
        self.api_client.update_params_for_auth(headers, [], AUTH, path, method, payload)
        url = self.host + path + query_string(query)
        return self.api_client.call_api(method, url, headers, payload, None, _request_timeout=timeout).response
