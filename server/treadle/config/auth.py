"""Who may call the server: credentials and their scopes, and the limits every caller shares.

::

    auth:
      reflection: false              # serve gRPC reflection (to holders of a valid token)
      credentials:
        - id: web-app
          tokenSha256: "<hex>"       # sha256 of the bearer token: the file holds no secret
          agents: [echo, support-*]  # may call Generate/Stream on these
          resources: ["tenant-a/*"]  # may read, subscribe to and signal these resources' threads
        - id: guard-team
          tokenSha256: "<hex>"
          processors: [pii-guard]    # may attach as these processor ids
          tools: [get_weather]       # may attach these tool names
        - id: ops
          tokenSha256: "<hex>"
          clientCertSubject: "CN=ops" # and only over a TLS connection with this client cert
          admin: true                # agent CRUD, every scope
    limits:
      maxConcurrentRuns: 256
      maxConcurrentRunsPerCredential: 64
      maxAttachedStreamsPerCredential: 32

Patterns are plain globs (``*``, ``?``, ``[abc]``), matched case-sensitively against the whole
name. This module only parses and answers questions; the gRPC edge (``api/auth.py``) enforces.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Any, Literal

from ..core.errors import TreadleError

Scope = Literal["agents", "resources", "processors", "tools"]
SCOPES: tuple[Scope, ...] = ("agents", "resources", "processors", "tools")

_HEX64 = re.compile(r"^[0-9a-fA-F]{64}$")
_CREDENTIAL_KEYS = {"id", "tokenSha256", "clientCertSubject", "admin", *SCOPES}
_AUTH_KEYS = {"credentials", "reflection"}
_LIMIT_KEYS = {
    "maxConcurrentRuns": "max_concurrent_runs",
    "maxConcurrentRunsPerCredential": "max_concurrent_runs_per_credential",
    "maxAttachedStreamsPerCredential": "max_attached_streams_per_credential",
    "maxListPageBytes": "max_list_page_bytes",
}


class AuthConfigError(TreadleError):
    """The ``auth`` or ``limits`` section cannot be used; the message says where and why."""


@dataclass(frozen=True)
class Credential:
    id: str
    token_sha256: bytes | None = None
    """The SHA-256 digest of the bearer token; None when the client certificate alone identifies."""
    client_cert_subject: str | None = None
    """When set, the caller must also present a client certificate with this subject (or CN)."""
    admin: bool = False
    agents: tuple[str, ...] = ()
    resources: tuple[str, ...] = ()
    processors: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()

    def allows(self, scope: Scope, name: str) -> bool:
        """True when ``name`` matches one of this credential's ``scope`` patterns (admin: always)."""
        if self.admin:
            return True
        return any(fnmatchcase(name, pattern) for pattern in getattr(self, scope))


@dataclass(frozen=True)
class AuthConfig:
    credentials: tuple[Credential, ...]
    reflection: bool = False
    _by_digest: dict[bytes, Credential] = field(init=False, repr=False, compare=False)
    _cert_only: tuple[Credential, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:  # indexes, built once: a lookup costs the same for any number
        by_digest = {c.token_sha256: c for c in self.credentials if c.token_sha256 is not None}
        object.__setattr__(self, "_by_digest", by_digest)
        object.__setattr__(self, "_cert_only", tuple(c for c in self.credentials if c.token_sha256 is None))

    def find(self, token: str | None, cert_subjects: tuple[str, ...] = ()) -> Credential | None:
        """The credential a caller with ``token`` and a client certificate naming ``cert_subjects``
        holds, or None.

        The token is hashed first, so nothing about its bytes reaches a comparison: the digest
        picks a candidate from a hash table (SipHash, keyed per process) and is then compared
        with ``hmac.compare_digest``, in constant time.
        """
        if token:
            digest = hashlib.sha256(token.encode()).digest()
            cred = self._by_digest.get(digest)
            if cred is None or not hmac.compare_digest(digest, cred.token_sha256 or b""):
                return None
        else:
            return next((c for c in self._cert_only if c.client_cert_subject in cert_subjects), None)
        if cred.client_cert_subject is not None and cred.client_cert_subject not in cert_subjects:
            return None
        return cred


@dataclass(frozen=True)
class Limits:
    """Safe defaults; each over-limit call gets RESOURCE_EXHAUSTED naming the limit."""

    max_concurrent_runs: int = 256
    max_concurrent_runs_per_credential: int = 64
    max_attached_streams_per_credential: int = 64
    max_list_page_bytes: int = 4 << 20
    """A ListAgents page stops before it grows past this many bytes."""


def token_sha256(token: str) -> str:
    """The hex digest to put in ``tokenSha256`` for ``token``."""
    return hashlib.sha256(token.encode()).hexdigest()


def parse_auth(data: Any, where: str = "auth") -> AuthConfig:
    if not isinstance(data, Mapping):
        raise AuthConfigError(f"{where} must be a mapping with 'credentials'")
    _no_unknown(data, _AUTH_KEYS, where)
    items = data.get("credentials") or []
    if not isinstance(items, list):
        raise AuthConfigError(f"{where}.credentials must be a list")
    reflection = data.get("reflection", False)
    if not isinstance(reflection, bool):
        raise AuthConfigError(f"{where}.reflection must be true or false")
    creds: list[Credential] = []
    for i, item in enumerate(items):
        cred = _credential(item, f"{where}.credentials[{i}]")
        if any(c.id == cred.id for c in creds):
            raise AuthConfigError(f"{where}.credentials[{i}]: id {cred.id!r} is used twice")
        if cred.token_sha256 is not None and any(c.token_sha256 == cred.token_sha256 for c in creds):
            raise AuthConfigError(f"{where}.credentials[{i}] ({cred.id!r}): tokenSha256 is used twice")
        creds.append(cred)
    return AuthConfig(tuple(creds), reflection)


def parse_limits(data: Any, where: str = "limits") -> Limits:
    if not isinstance(data, Mapping):
        raise AuthConfigError(f"{where} must be a mapping")
    _no_unknown(data, set(_LIMIT_KEYS), where)
    values: dict[str, int] = {}
    for key, attr in _LIMIT_KEYS.items():
        if key in data:
            value = data[key]
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise AuthConfigError(f"{where}.{key} must be a positive integer, got {value!r}")
            values[attr] = value
    return Limits(**values)


def _credential(item: Any, where: str) -> Credential:
    if not isinstance(item, Mapping):
        raise AuthConfigError(f"{where} must be a mapping")
    _no_unknown(item, _CREDENTIAL_KEYS, where)
    cid = item.get("id")
    if not isinstance(cid, str) or not cid:
        raise AuthConfigError(f"{where}.id is required")
    where = f"{where} ({cid!r})"
    digest = item.get("tokenSha256")
    subject = item.get("clientCertSubject")
    if digest is not None and (not isinstance(digest, str) or not _HEX64.match(digest)):
        raise AuthConfigError(f"{where}.tokenSha256 must be 64 hex digits (the SHA-256 of the token)")
    if subject is not None and (not isinstance(subject, str) or not subject):
        raise AuthConfigError(f"{where}.clientCertSubject must be a non-empty string")
    if digest is None and subject is None:
        raise AuthConfigError(f"{where} needs tokenSha256, clientCertSubject, or both")
    admin = item.get("admin", False)
    if not isinstance(admin, bool):
        raise AuthConfigError(f"{where}.admin must be true or false")
    scopes: dict[str, tuple[str, ...]] = {}
    for scope in SCOPES:
        patterns = item.get(scope) or []
        if not isinstance(patterns, list) or not all(isinstance(p, str) and p for p in patterns):
            raise AuthConfigError(f"{where}.{scope} must be a list of non-empty glob patterns")
        scopes[scope] = tuple(patterns)
    return Credential(
        id=cid,
        token_sha256=bytes.fromhex(digest) if digest is not None else None,
        client_cert_subject=subject,
        admin=admin,
        **scopes,
    )


def _no_unknown(data: Mapping[str, Any], known: set[str], where: str) -> None:
    unknown = sorted(set(data) - known)
    if unknown:
        raise AuthConfigError(f"{where}: unknown keys {unknown}; expected some of {sorted(known)}")
