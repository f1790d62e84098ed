"""Declarative agent files: YAML or JSON, agents in the proto's JSON form.

::

    agents:
      - id: echo
        name: Echo
        instructions: You are terse.
        model: openai/gpt-4o-mini

A bare list of agents is accepted too. This module only reads the file and checks its shape;
each agent dict is parsed into an ``Agent`` by ``api.convert.agent_from_dict`` (proto JSON is the
one format, so the file and ``CreateAgent`` can never disagree).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from ..core.errors import TreadleError


class AgentFileError(TreadleError):
    """The agent file cannot be used; the message names the file and, where known, the agent."""


SECTIONS = ("agents", "auth", "limits", "providers", "providerCredentials", "remoteServers")
"""Top-level keys of the server config file; all but ``agents`` are read by ``config.security``."""


def read_config_file(path: Path) -> Any:
    """The parsed YAML or JSON in ``path`` (None when empty)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise AgentFileError(f"{path}: cannot read: {e.strerror or e}") from None
    try:
        return json.loads(text) if path.suffix.lower() == ".json" else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as e:
        raise AgentFileError(f"{path}: not valid {'JSON' if path.suffix.lower() == '.json' else 'YAML'}: {e}") from None


def load_agent_file(path: Path) -> list[dict[str, Any]]:
    """The agent dicts in ``path``, in file order."""
    data = read_config_file(path)
    if data is None:
        return []
    if isinstance(data, dict):
        unknown = sorted(set(data) - set(SECTIONS))
        if unknown:
            raise AgentFileError(f"{path}: unknown top-level keys {unknown}; expected some of {list(SECTIONS)}")
        data = data.get("agents") or []
    if not isinstance(data, list):
        raise AgentFileError(f"{path}: expected a list of agents or an 'agents:' list")
    seen: dict[str, int] = {}
    for i, item in enumerate(data):
        if not isinstance(item, dict):
            raise AgentFileError(f"{path}: agents[{i}] is not an object")
        agent_id = item.get("id")
        if isinstance(agent_id, str) and agent_id in seen:
            raise AgentFileError(f"{path}: agents[{i}] repeats id {agent_id!r} (first at agents[{seen[agent_id]}])")
        if isinstance(agent_id, str):
            seen[agent_id] = i
    return data
