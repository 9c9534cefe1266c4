"""Bearer tokens for OCI registries that leave authentication to a token service (Distribution's `auth: token`,
and most hosted registries), traded for the Docker config file's credentials as docker, oras-go and helm do.

oras's own token backend keeps one token for every request and cannot use an `identitytoken`; this one keeps a
token per scope the registry's challenge names (a push needs `pull,push` after a pull-only look at a blob),
trades a username and password with a GET of the realm (Basic auth), an identity token with the OAuth2
refresh-token grant (a POST of the realm), nothing for an anonymous token, and turns a refusal by the token
service into one sentence that names no secret.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import oras.auth
import oras.auth.utils
import requests

from engine.errors import PermanentError, TransientError

__all__ = ["BearerAuth", "Refused", "Unreachable", "identity_token"]

CLIENT_ID = "kplan"
TOKEN_TIMEOUT = 30.0


class Refused(PermanentError, oras.auth.AuthenticationException):  # type: ignore[misc]
    """The token service turned the credentials down (an AuthenticationException, which oras does not retry)."""


class Unreachable(TransientError, oras.auth.AuthenticationException):  # type: ignore[misc]
    """The token service did not answer (oras's retries, minutes long, would not make it answer sooner)."""


class BearerAuth(oras.auth.TokenAuth):  # type: ignore[misc]  # oras has no type information
    """oras's token backend with a token per scope, identity tokens and refusals in one sentence."""

    def __init__(self, registry: str, config: Path, like: Any) -> None:
        super().__init__()
        self.registry, self.config = registry, config
        self.session: requests.Session = like.session
        self.prefix: str = like.prefix
        self._tls_verify: bool = like._tls_verify
        self.tokens: dict[str, str] = {}
        self.identity: str | None = None
        self.session.hooks["response"].append(self.granted)

    def granted(self, answer: requests.Response, *args: Any, **kwargs: Any) -> None:
        """Refuse at once when the token fetched for a scope does not grant it (oras would go on, and fail
        later for a reason it does not tell)."""
        challenge = str(answer.headers.get("WWW-Authenticate") or "")
        if answer.status_code != 401 or 'error="insufficient_scope"' not in challenge:
            return
        scope = str(oras.auth.utils.parse_auth_header(challenge).scope or "")
        if scope in self.tokens and answer.request.headers.get("Authorization") == f"Bearer {self.tokens[scope]}":
            raise Refused(f"the credentials that {self.config} has for registry {self.registry} do not grant "
                          f"{scope or 'access'} (its token service left that out of the token)")

    def load_configs(self, container: Any, configs: list[str] | None = None) -> None:
        """The username and password (oras reads them, helpers included) and the identity token, if any."""
        super().load_configs(container, configs=configs)
        self.identity = identity_token(self.config, self.registry)

    def authenticate_request(self, original: requests.Response, headers: dict[str, str] | None,
                             refresh: bool = False) -> tuple[dict[str, str], bool]:
        """The headers to retry with: a token for the challenge's scope, fetched anew when the one just sent
        for it was turned down."""
        headers = dict(headers or {})
        challenge = str(original.headers.get("WWW-Authenticate") or "")
        if not challenge.lower().startswith("bearer"):
            return headers, False
        asked = oras.auth.utils.parse_auth_header(challenge)
        scope = str(asked.scope or "")
        token = self.tokens.get(scope)
        if token is None or refresh or headers.get("Authorization") == f"Bearer {token}":  # none yet, or expired
            token = self.tokens[scope] = self.fetch(str(asked.realm or ""), str(asked.service or ""), scope)
        self.token = token
        headers["Authorization"] = f"Bearer {token}"
        return headers, True

    def fetch(self, realm: str, service: str, scope: str) -> str:
        """A token from the token service at `realm`, for the credentials there are."""
        if not realm.startswith(("http://", "https://")):
            raise Refused(f"registry {self.registry} asks for a bearer token but names no token service URL "
                                 f"(realm {realm!r})")
        basic = getattr(self, "_basic_auth", None)
        fields = {k: v for k, v in (("service", service), ("scope", scope)) if v}
        try:
            if self.identity:
                form = {"grant_type": "refresh_token", "refresh_token": self.identity, "client_id": CLIENT_ID, **fields}
                answer = self.session.post(realm, data=form, timeout=TOKEN_TIMEOUT, verify=self._tls_verify)
            else:
                headers = {"Authorization": f"Basic {basic}"} if basic else {}
                answer = self.session.get(realm, params=fields, headers=headers, timeout=TOKEN_TIMEOUT,
                                          verify=self._tls_verify)
        except requests.RequestException as err:
            raise Unreachable(f"the token service of registry {self.registry} ({realm}) is unreachable: "
                                 f"{type(err).__name__}") from None
        if answer.status_code in (401, 403):
            raise self.refused(realm, bool(basic))
        token = token_in(answer)
        if answer.status_code != 200 or not token:
            raise Refused(f"the token service of registry {self.registry} ({realm}) gave no token: "
                                 f"{answer.status_code} {answer.reason}")
        return token

    def refused(self, realm: str, basic: bool) -> Refused:
        if not basic and not self.identity:
            return Refused(f"registry {self.registry} wants a login and {self.config} has no credentials for "
                                  f"it; log in with `docker login {self.registry}` (or `oras login`)")
        what = "identity token" if self.identity else "username and password"
        return Refused(f"the token service of registry {self.registry} ({realm}) refused the {what} that "
                              f"{self.config} has for it; log in again with `docker login {self.registry}`")


def token_in(answer: requests.Response) -> str:
    try:
        found = answer.json()
    except ValueError:
        return ""
    return str(found.get("token") or found.get("access_token") or "") if isinstance(found, dict) else ""


def identity_token(config: Path, registry: str) -> str | None:
    """The `identitytoken` the Docker config file keeps for `registry` (as `docker login` writes it for a token
    service that hands out refresh tokens), None when there is none."""
    if not config.is_file():
        return None
    try:
        auths = json.loads(config.read_text(encoding="utf-8")).get("auths") or {}
    except (OSError, UnicodeDecodeError, ValueError, AttributeError):
        raise PermanentError(f"{config} is not a Docker config file (JSON with an 'auths' mapping)") from None
    for key in (registry, f"https://{registry}", f"http://{registry}", *oras_hosts(registry)):
        entry = auths.get(key) if isinstance(auths, dict) else None
        if isinstance(entry, dict) and entry.get("identitytoken"):
            return str(entry["identitytoken"])
    return None


def oras_hosts(registry: str) -> list[str]:
    """The other spellings oras looks a local registry up by (localhost and 127.0.0.1 alike)."""
    import oras.utils

    return [h for h in oras.utils.iter_localhosts(registry) if h != registry]
