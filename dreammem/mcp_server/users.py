"""Whose memory a call reads and writes: fixed per server, or bound to the caller's bearer token.

A client never names a user. A stdio server (and an HTTP server without tokens) serves
the one user it was started for. An HTTP server with tokens serves, for each request,
the user its bearer token is bound to in the server's configuration; the SDK's bearer
middleware refuses any other request with 401 before a tool runs.
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken

from dreammem.config import MCPConfig
from dreammem.errors import ConfigError, DreamMemError, ScopeError
from dreammem.validation import check_user_id

__all__ = ["MIN_TOKEN_CHARS", "TokenUsers", "UserBinding", "binding_for", "load_tokens"]

MIN_TOKEN_CHARS = 16
"""The shortest bearer token accepted in the configuration (a guessable token is a shared memory)."""


def _digest(token: str) -> str:
    # Tokens are looked up by their hash, so a lookup's timing tells nothing about a token's text.
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class TokenUsers:
    """Bearer token -> user id, as the SDK's ``TokenVerifier``.

    Args:
        tokens: The configured mapping (token -> user id).

    Raises:
        ConfigError: a token is shorter than :data:`MIN_TOKEN_CHARS`, or a user id is malformed.
    """

    def __init__(self, tokens: Mapping[str, str]) -> None:
        users: dict[str, str] = {}
        for token, user in tokens.items():
            if len(token.strip()) < MIN_TOKEN_CHARS:
                raise ConfigError(f"a bearer token must have at least {MIN_TOKEN_CHARS} characters")
            try:
                users[_digest(token)] = check_user_id(user)
            except DreamMemError as exc:
                raise ConfigError(f"bad user id for a bearer token: {exc}") from exc
        self._users = users

    def __len__(self) -> int:
        return len(self._users)

    def user_of(self, token: str) -> str | None:
        """The user ``token`` is bound to, if it is a configured token."""
        return self._users.get(_digest(token))

    async def verify_token(self, token: str) -> AccessToken | None:
        """The SDK's hook: an access token whose client and subject are the bound user."""
        user = self.user_of(token)
        if user is None:
            return None
        return AccessToken(token=token, client_id=user, subject=user, scopes=[])


def load_tokens(path: Path) -> dict[str, str]:
    """Read a TOML or JSON file whose top-level table maps bearer tokens to user ids.

    Raises:
        ConfigError: the file cannot be read, or is not such a table.
    """
    try:
        text = path.read_text(encoding="utf-8")
        data = json.loads(text) if path.suffix == ".json" else tomllib.loads(text)
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read the tokens file {path}: {exc}") from exc
    if not isinstance(data, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in data.items()
    ):
        raise ConfigError(f"the tokens file {path} must map each token to a user id (strings)")
    return data


@dataclass(frozen=True, slots=True)
class UserBinding:
    """How a server finds the user of a call: exactly one of a fixed user or token users.

    Raises:
        ConfigError: both or neither are given.
    """

    user: str | None = None
    tokens: TokenUsers | None = None

    def __post_init__(self) -> None:
        if (self.user is None) == (self.tokens is None or len(self.tokens) == 0):
            raise ConfigError(
                "serve either one user (--user, or [mcp] user) or, over HTTP, the users of bearer tokens "
                "([mcp] tokens / tokens_file, or --tokens), not both and not neither"
            )
        if self.user is not None:
            try:
                check_user_id(self.user)
            except DreamMemError as exc:
                raise ConfigError(f"bad user id to serve: {exc}") from exc

    def current(self) -> str:
        """The user of the call being served.

        Raises:
            ScopeError: tokens are configured but the call carries no verified token (never
                reached through the SDK's bearer middleware, which refuses such requests).
        """
        if self.user is not None:
            return self.user
        access = get_access_token()
        if access is None:
            raise ScopeError("this server serves the users of bearer tokens: the call carries none")
        return access.client_id


def binding_for(
    settings: MCPConfig, *, http: bool, user: str | None = None, tokens: Path | None = None
) -> UserBinding:
    """Whom a server serves, from the ``[mcp]`` section and the command line.

    Over stdio: ``user``, else ``settings.user``. Over HTTP: the users of the bearer tokens
    of ``tokens`` (else ``settings.tokens_file``) and ``settings.tokens`` when there are
    any, else one user as over stdio.

    Raises:
        ConfigError: no user to serve, ``user`` given beside tokens, or a bad tokens file.
    """
    table: dict[str, str] = {}
    if http:
        table.update(settings.tokens)
        file = tokens or settings.tokens_file
        if file is not None:
            table.update(load_tokens(file))
    if not table:
        return UserBinding(user=user or settings.user)
    if user is not None:
        raise ConfigError(
            "--user and bearer tokens exclude each other: with tokens, each token names its user"
        )
    return UserBinding(tokens=TokenUsers(table))
