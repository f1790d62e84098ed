"""Who may call the server: credentials and their scopes, and the limits every caller shares.

::

    auth:
      reflection: false              # serve gRPC reflection (to holders of a valid token)
      credentials:
        - id: web-app
          tokenSha256: "<hex>"       # sha256 of the bearer token: the file holds no secret
          agents: [echo, support-*]  # may call Generate/Stream on these (and wake them)
          processorOverrides: false  # may not replace agents' processors per call (default true)
          rawToolPayloads: false     # sees tool payloads as the model does, untransformed (default false)
          resources: ["tenant-a/*"]  # may read, subscribe to and signal these resources' threads
        - id: guard-team
          tokenSha256: "<hex>"
          processors: [pii-guard]    # may attach as these processor ids (named exactly: only it)
          tools: [get_weather]       # may attach these tool names
          voices: [studio-tts]       # may attach these voice provider ids
        - id: ops
          tokenSha256: "<hex>"
          clientCertSubject: "CN=ops" # and only with a client certificate of this subject (parsed DN)
          admin: true                # agent CRUD, every scope
    limits:
      maxConcurrentRuns: 256
      maxConcurrentRunsPerCredential: 64
      maxAttachedStreamsPerCredential: 32
      maxMessagesPerRequest: 100
      maxRequestBytes: 4194304        # any request, encoded
      maxSignalBytes: 1048576         # a signal request, encoded
      maxSignalsPerThread: 100
      maxQueuedPerThread: 20
      maxSubscriberBacklogBytes: 8388608

Patterns are plain globs (``*``, ``?``, ``[abc]``), matched case-sensitively against the whole
name. This module only parses and answers questions; the gRPC edge (``api/auth.py``) enforces.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from fnmatch import fnmatchcase
from typing import Any, Literal

from ..core.errors import TreadleError

Scope = Literal["agents", "resources", "processors", "tools", "voices"]
DistinguishedName = tuple[tuple[str, str], ...]
"""A parsed subject: its (attribute type, value) pairs, sorted, so that the order the
certificate or the config file writes them in does not matter."""
SCOPES: tuple[Scope, ...] = ("agents", "resources", "processors", "tools", "voices")

_HEX64 = re.compile(r"^[0-9a-fA-F]{64}$")
_CREDENTIAL_KEYS = {"id", "tokenSha256", "clientCertSubject", "admin", "processorOverrides", "rawToolPayloads",
                    *SCOPES}
_AUTH_KEYS = {"credentials", "reflection"}
_LIMIT_KEYS = {
    "maxConcurrentRuns": "max_concurrent_runs",
    "maxConcurrentRunsPerCredential": "max_concurrent_runs_per_credential",
    "maxAttachedStreamsPerCredential": "max_attached_streams_per_credential",
    "maxListPageBytes": "max_list_page_bytes",
    "maxMessagesPerRequest": "max_messages_per_request",
    "maxRequestBytes": "max_request_bytes",
    "maxSignalBytes": "max_signal_bytes",
    "maxSignalsPerThread": "max_signals_per_thread",
    "maxQueuedPerThread": "max_queued_per_thread",
    "maxSubscriberBacklogBytes": "max_subscriber_backlog_bytes",
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
    voices: tuple[str, ...] = ()
    """Voice provider ids it may attach (``VoiceProviderService``)."""
    processor_overrides: bool = True
    raw_tool_payloads: bool = False
    """Sees tool payloads raw on every egress (streams, results, subscriptions, listings), where
    others see them as the agent's tool payload rules project them. Only this flag grants it:
    ``admin`` does not, so operating the server never requires seeing what tools carry."""
    subject_dn: DistinguishedName | None = field(default=None, compare=False)
    """``client_cert_subject`` parsed (``parse_dn``): compared with the certificate's parsed
    subject, never as text, so a CN that reads ``CN=ops`` is not the subject ``CN=ops``."""
    """May replace an agent's processor lanes per call (``options.inputProcessors``, ...); the
    agent's locked processors stay either way."""

    reserved: Mapping[str, Mapping[str, str]] = field(default_factory=dict, compare=False, repr=False)
    """Processor ids and tool names another credential names exactly (no glob), by scope, with
    that credential's id: this one cannot attach them, whatever its patterns or admin say."""

    def __post_init__(self) -> None:
        if self.client_cert_subject is not None and self.subject_dn is None:
            object.__setattr__(self, "subject_dn", parse_dn(self.client_cert_subject))

    def presented_by(self, certs: tuple[DistinguishedName, ...]) -> bool:
        """True when one of the client certificates' subjects is this credential's: the same
        attributes, or, for a subject that names a CN alone, a certificate with that CN."""
        want = self.subject_dn
        if not want:
            return False
        if len(want) == 1 and want[0][0] == "CN":
            return any(want[0] in cert for cert in certs)
        return want in certs

    def allows(self, scope: Scope, name: str) -> bool:
        """True when ``name`` matches one of this credential's ``scope`` patterns (admin: always),
        unless another credential names it exactly (``reserved``)."""
        return name not in self.reserved.get(scope, {}) and self.matches(scope, name)

    def matches(self, scope: Scope, name: str) -> bool:
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

    def find(self, token: str | None, cert_subjects: tuple[DistinguishedName, ...] = ()) -> Credential | None:
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
            return next((c for c in self._cert_only if c.presented_by(cert_subjects)), None)
        if cred.client_cert_subject is not None and not cred.presented_by(cert_subjects):
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
    max_messages_per_request: int = 100
    """Messages in one ``Generate``/``Stream`` request."""
    max_request_bytes: int = 4 << 20
    """The encoded size of one request (a run's prompt, messages and options; an agent; a
    thread): what is stored from it then always fits in a listing's page."""
    max_signal_bytes: int = 1 << 20
    """The encoded size of one signal request: a signal is stored rendered (escaped, up to six
    times longer) and as sent, and both must fit in a listing's page."""
    max_signals_per_thread: int = 100
    """Signals waiting in one thread: delivered to its run but not yet taken in, plus those
    stored for its next run."""
    max_queued_per_thread: int = 20
    """Queued messages (``QueueMessage``) waiting on one thread, each its own run."""
    max_subscriber_backlog_bytes: int = 8 << 20
    """What one ``SubscribeToThread`` stream may have waiting to be sent before it is ended."""


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
    return AuthConfig(_reserve(creds), reflection)


_GLOB = re.compile(r"[*?\[]")


def _reserve(creds: list[Credential]) -> tuple[Credential, ...]:
    """Each credential learns the processor ids and tool names others name exactly."""
    named: dict[str, dict[str, str]] = {"processors": {}, "tools": {}, "voices": {}}
    for cred in creds:
        for scope, names in named.items():
            for pattern in getattr(cred, scope):
                if not _GLOB.search(pattern):
                    names.setdefault(pattern, cred.id)
    out: list[Credential] = []
    for cred in creds:
        reserved = {scope: {n: owner for n, owner in names.items() if owner != cred.id and n not in getattr(cred, scope)}
                    for scope, names in named.items()}
        out.append(replace(cred, reserved=reserved))
    return tuple(out)


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
    if subject is not None:
        try:
            parse_dn(subject)
        except ValueError as e:
            raise AuthConfigError(f"{where}.clientCertSubject {subject!r} is not a distinguished name "
                                  f"like 'CN=ops,O=Example': {e}") from None
    if digest is None and subject is None:
        raise AuthConfigError(f"{where} needs tokenSha256, clientCertSubject, or both")
    admin = item.get("admin", False)
    if not isinstance(admin, bool):
        raise AuthConfigError(f"{where}.admin must be true or false")
    overrides = item.get("processorOverrides", True)
    if not isinstance(overrides, bool):
        raise AuthConfigError(f"{where}.processorOverrides must be true or false")
    raw = item.get("rawToolPayloads", False)
    if not isinstance(raw, bool):
        raise AuthConfigError(f"{where}.rawToolPayloads must be true or false")
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
        agents=scopes["agents"],
        resources=scopes["resources"],
        processors=scopes["processors"],
        tools=scopes["tools"],
        voices=scopes["voices"],
        processor_overrides=overrides,
        raw_tool_payloads=raw,
    )


_DN_TYPES = {"COMMONNAME": "CN", "ORGANIZATIONNAME": "O", "ORGANIZATIONALUNITNAME": "OU",
             "COUNTRYNAME": "C", "LOCALITYNAME": "L", "STATEORPROVINCENAME": "ST",
             "EMAILADDRESS": "EMAILADDRESS", "E": "EMAILADDRESS", "DOMAINCOMPONENT": "DC",
             "SERIALNUMBER": "SERIALNUMBER", "STREET": "STREET", "UID": "UID", "USERID": "UID"}


def parse_dn(text: str) -> DistinguishedName:
    r"""An RFC 4514 distinguished name (``CN=ops,O=Example``, as TLS libraries print subjects)
    parsed into its attributes: escapes (``\,``, ``\=``, ``\3D``) decoded, types upper-cased.
    ``ValueError`` when it is not one."""
    pairs: list[tuple[str, str]] = []
    i, n = 0, len(text)
    while i < n:
        eq = text.find("=", i)
        if eq < 0:
            raise ValueError(f"no '=' after {text[i:]!r}")
        kind = text[i:eq].strip().upper()
        if not kind or not all(c.isalnum() or c in ".-" for c in kind):
            raise ValueError(f"bad attribute type {text[i:eq]!r}")
        kind = _DN_TYPES.get(kind, kind)
        i, value = eq + 1, bytearray()
        while i < n and text[i] not in ",+":
            c = text[i]
            if c == "\\":
                pair = text[i + 1:i + 3]
                if len(pair) == 2 and all(h in "0123456789abcdefABCDEF" for h in pair):
                    value += bytes.fromhex(pair)
                    i += 3
                    continue
                if i + 1 >= n:
                    raise ValueError("a trailing backslash")
                value += text[i + 1].encode()
                i += 2
                continue
            value += c.encode()
            i += 1
        try:
            pairs.append((kind, value.decode().strip()))
        except UnicodeDecodeError:
            raise ValueError("an escaped value that is not UTF-8") from None
        if i < n:
            i += 1
            if i == n:
                raise ValueError("it ends with a separator")
    if not pairs:
        raise ValueError("it is empty")
    return tuple(sorted(pairs))


def _no_unknown(data: Mapping[str, Any], known: set[str], where: str) -> None:
    unknown = sorted(set(data) - known)
    if unknown:
        raise AuthConfigError(f"{where}: unknown keys {unknown}; expected some of {sorted(known)}")
