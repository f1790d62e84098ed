"""Server settings, from command-line arguments over environment variables over defaults.

Environment: ``TREADLE_LISTEN``, ``TREADLE_CONFIG``, ``TREADLE_GRACE``,
``TREADLE_MAX_MESSAGE_BYTES``, ``TREADLE_TOOL_TIMEOUT``, ``TREADLE_PROCESSOR_TIMEOUT``,
``TREADLE_PROCESSOR_MAX_TIMEOUT``, ``TREADLE_PROCESSOR_ATTACH_WAIT``,
``TREADLE_PROCESSOR_EJECTION_THRESHOLD``, ``TREADLE_PROCESSOR_EJECTION_TIME``, ``TREADLE_DATA_DIR``,
``TREADLE_DATABASE_URL``, ``TREADLE_AUTH_FILE``, ``TREADLE_TLS_CERT``, ``TREADLE_TLS_KEY``,
``TREADLE_TLS_CLIENT_CA``, ``TREADLE_THREAD_LEASE_TTL``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

DEFAULT_LISTEN = "127.0.0.1:50051"
DEFAULT_GRACE = 30.0
DEFAULT_MAX_MESSAGE_BYTES = 16 << 20
DEFAULT_DATA_DIR = Path(".treadle")
DEFAULT_THREAD_LEASE_TTL = 30.0


def _default_data_dir() -> Path:
    return DEFAULT_DATA_DIR  # looked up when Settings are made (tests point it elsewhere)


@dataclass(frozen=True)
class Settings:
    listen: str = DEFAULT_LISTEN
    """``HOST:PORT``; port 0 lets the system pick one."""
    config_file: Path | None = None
    """Agents to load at start; when None the built-in example agent is served instead."""
    grace: float = DEFAULT_GRACE
    """Seconds in-flight runs get to finish on shutdown."""
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
    example_agent: bool = True
    """Serve the built-in ``assistant`` agent when no config file is given and no agent is
    registered in code."""
    tool_timeout: float = 60.0
    """Seconds the server waits for a remote tool's answer before the model gets a tool error."""
    processor_timeout: float = 10.0
    """Seconds a remote processor hook may take when the processor asks for no other timeout."""
    processor_max_timeout: float = 60.0
    """The most any remote processor may ask for (the agent's cap may still be shorter)."""
    processor_attach_wait: float = 0.0
    """Seconds a run waits, once, for a named remote processor that is not attached yet."""
    processor_ejection_threshold: int = 3
    """Consecutive timeouts or errors after which a processor replica is ejected (0: never)."""
    processor_ejection_time: float = 30.0
    """Seconds a replica's first ejection lasts; each further ejection lasts one more such time."""
    data_dir: Path = field(default_factory=_default_data_dir)
    """Where the SQLite database lives (``treadle.db``), unless ``database`` is given."""
    database: str | None = None
    """A ``postgresql://`` URL: store threads, messages, runs and agents there instead."""
    auth_file: Path | None = None
    """Credentials (an ``auth`` section) replacing the config file's; see docs/security.md."""
    insecure: bool = False
    """Allow a non-loopback listen address without auth."""
    tls_cert: Path | None = None
    tls_key: Path | None = None
    tls_client_ca: Path | None = None
    """When set, clients must present a certificate signed by this CA (mutual TLS)."""
    console: str | None = None
    """The web console's ``HOST:PORT`` (port 0 picks one), or ``off``. None: on a loopback
    ``listen``, the same host and the gRPC port plus one (port 0 when the gRPC port is 0), else
    off."""
    thread_lease_ttl: float = DEFAULT_THREAD_LEASE_TTL
    """Seconds a replica's lease on a running thread lasts unless renewed (it is renewed while the
    run runs): how long a thread waits for another replica after its runner died."""
    scorer_claim: float = 65.0
    """Seconds a replica's claim on a queued scoring lasts: a scoring takes at most this less 5
    seconds, and a row held by a replica that died is scored elsewhere once its claim runs out."""

    def __post_init__(self) -> None:
        host, sep, port = self.listen.rpartition(":")
        if not sep or not host or not port.isdigit() or int(port) > 65535:
            raise ValueError(f"listen address {self.listen!r} must be HOST:PORT, e.g. 127.0.0.1:50051")
        if self.grace < 0:
            raise ValueError(f"grace period must be >= 0 seconds, got {self.grace}")
        if self.tool_timeout <= 0:
            raise ValueError(f"tool timeout must be > 0 seconds, got {self.tool_timeout}")
        if self.max_message_bytes <= 0:
            raise ValueError("max message size must be positive")
        if self.processor_timeout <= 0 or self.processor_max_timeout <= 0:
            raise ValueError("processor timeouts must be > 0 seconds")
        if self.processor_ejection_threshold < 0 or self.processor_ejection_time <= 0:
            raise ValueError("processor ejection threshold must be >= 0 and its time > 0 seconds")
        if self.database is not None and not self.database.startswith(("postgresql://", "postgres://")):
            raise ValueError(f"database {self.database!r} must be a postgresql:// URL")
        if (self.tls_cert is None) != (self.tls_key is None):
            raise ValueError("TLS needs both a certificate and a key (--tls-cert and --tls-key)")
        if self.tls_client_ca is not None and self.tls_cert is None:
            raise ValueError("--tls-client-ca needs --tls-cert and --tls-key")
        if self.console is not None and self.console != "off":
            chost, csep, cport = self.console.rpartition(":")
            if not csep or not chost or not cport.isdigit() or int(cport) > 65535:
                raise ValueError(f"console address {self.console!r} must be HOST:PORT (e.g. 127.0.0.1:50052) or off")
        if self.thread_lease_ttl <= 0:
            raise ValueError(f"thread lease TTL must be > 0 seconds, got {self.thread_lease_ttl}")
        if self.scorer_claim <= 5:
            raise ValueError(f"scorer claim must be > 5 seconds, got {self.scorer_claim}")
        if self.processor_attach_wait < 0:
            raise ValueError(f"processor attach wait must be >= 0 seconds, got {self.processor_attach_wait}")

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        """Settings from ``TREADLE_*`` variables; ``overrides`` that are not None win."""
        env = os.environ if env is None else env
        values: dict[str, Any] = {}
        if env.get("TREADLE_LISTEN"):
            values["listen"] = env["TREADLE_LISTEN"]
        if env.get("TREADLE_CONFIG"):
            values["config_file"] = Path(env["TREADLE_CONFIG"])
        if env.get("TREADLE_DATA_DIR"):
            values["data_dir"] = Path(env["TREADLE_DATA_DIR"])
        if env.get("TREADLE_CONSOLE"):
            values["console"] = env["TREADLE_CONSOLE"]
        if env.get("TREADLE_DATABASE_URL"):
            values["database"] = env["TREADLE_DATABASE_URL"]
        for var, name in (("TREADLE_AUTH_FILE", "auth_file"), ("TREADLE_TLS_CERT", "tls_cert"),
                          ("TREADLE_TLS_KEY", "tls_key"), ("TREADLE_TLS_CLIENT_CA", "tls_client_ca")):
            if env.get(var):
                values[name] = Path(env[var])
        for var, name, kind in (
            ("TREADLE_GRACE", "grace", float),
            ("TREADLE_MAX_MESSAGE_BYTES", "max_message_bytes", int),
            ("TREADLE_TOOL_TIMEOUT", "tool_timeout", float),
            ("TREADLE_PROCESSOR_TIMEOUT", "processor_timeout", float),
            ("TREADLE_PROCESSOR_MAX_TIMEOUT", "processor_max_timeout", float),
            ("TREADLE_PROCESSOR_ATTACH_WAIT", "processor_attach_wait", float),
            ("TREADLE_PROCESSOR_EJECTION_THRESHOLD", "processor_ejection_threshold", int),
            ("TREADLE_PROCESSOR_EJECTION_TIME", "processor_ejection_time", float),
            ("TREADLE_THREAD_LEASE_TTL", "thread_lease_ttl", float),
            ("TREADLE_SCORER_CLAIM", "scorer_claim", float),
        ):
            if env.get(var):
                try:
                    values[name] = kind(env[var])
                except ValueError:
                    raise ValueError(f"{var}={env[var]!r} is not a number") from None
        values.update({k: v for k, v in overrides.items() if v is not None})
        return replace(cls(), **values)
