"""Imports point one way, from the edge inward (STYLE.md), and the public surfaces are pinned."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
ROOT = REPO / "server" / "treadle"
"""The server's part of the ``treadle`` namespace package."""
CORE = REPO / "clients" / "python" / "treadle"
"""The shared part (``treadle.v1``, ``treadle.core``, ``treadle.wire``), shipped with the client."""
CLIENT = REPO / "clients" / "python" / "treadle_client"

# Layer of each top-level module or package; a module may import its own layer or lower ones.
LAYERS: dict[str, int] = {
    "v1": 0, "core": 0,
    "wire": 1,
    "agents": 0, "rules": 0, "variants": 0, "gc_tuning": 0,
    "tracing": 1,
    "processors": 2, "providers": 2, "tools": 2, "memory": 2, "registry": 2, "versions": 2,
    "loop": 3, "scoring": 3, "voice": 3,
    "signals": 4,
    "config": 5,
    "api": 6, "testing": 6, "console": 6,
    "app": 7,
    "cli": 8, "cli_chat": 8, "cli_agents": 8, "cli_threads": 8, "cli_processors": 8, "cli_security": 8,
    "cli_runs": 8, "cli_health": 8, "cli_store": 8, "cli_voice": 8,
}
EDGE = {"wire", "api", "console", "app", "testing", "cli", "cli_chat", "cli_agents", "cli_threads", "cli_processors",
        "cli_runs", "cli_health", "cli_security", "cli_voice"}
"""Only these may touch grpc or the generated code."""
SHARED = {"v1", "core", "wire"}
"""What the client distribution ships of the ``treadle`` namespace."""


def _modules() -> list[Path]:
    return [p for root in (ROOT, CORE) for p in root.rglob("*.py") if "v1" not in p.relative_to(root).parts]


def _root_of(path: Path) -> Path:
    return CORE if path.is_relative_to(CORE) else CLIENT if path.is_relative_to(CLIENT) else ROOT


def _top(path: Path) -> str:
    rel = path.relative_to(_root_of(path))
    return rel.parts[0].removesuffix(".py") if rel.parts[0] != "__init__.py" else ""


def _internal_imports(path: Path) -> list[tuple[str, int]]:
    """(top-level treadle module, line) for every import of the package from ``path``."""
    tree = ast.parse(path.read_text())
    package = path.relative_to(_root_of(path).parent).with_suffix("").parts[:-1]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(package[: len(package) - node.level + 1])
                target = base + (node.module.split(".") if node.module else [])
                if len(target) == 1:  # "from . import x"
                    target += [alias.name for alias in node.names][:1]
            elif node.module and node.module.split(".")[0] == "treadle":
                target = node.module.split(".")
            else:
                continue
            if len(target) > 1 and target[0] == "treadle":
                out.append((target[1], node.lineno))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "treadle" and len(parts) > 1:
                    out.append((parts[1], node.lineno))
    return out


def _third_party(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(REPO)))
def test_imports_point_inward(path: Path) -> None:
    top = _top(path)
    if not top:
        return
    assert top in LAYERS, f"{top} has no layer: add it to LAYERS"
    for target, line in _internal_imports(path):
        if target == top:
            continue
        assert target in LAYERS, f"{path.name}:{line} imports unknown module {target}"
        assert LAYERS[target] <= LAYERS[top], (
            f"{path.relative_to(REPO)}:{line} ({top}) imports {target}, a layer further out"
        )
        if target == "v1":
            assert top in EDGE, f"{path.relative_to(REPO)}:{line} uses generated code outside the edge"
        if top in SHARED:
            assert target in SHARED, f"{path.relative_to(REPO)}:{line} (shared) imports the server's {target}"
    if top not in EDGE:
        assert "grpc" not in _third_party(path), f"{path.relative_to(REPO)} imports grpc"


CLIENT_THIRD_PARTY = {"grpc", "google", "opentelemetry"}
"""All that ``treadle-client`` depends on (its pyproject.toml): grpcio, protobuf, opentelemetry-api."""


@pytest.mark.parametrize(
    "path",
    [p for root in (CLIENT, CORE) for p in root.rglob("*.py") if "v1" not in p.parts],
    ids=lambda p: str(p.relative_to(REPO)),
)
def test_the_client_distribution_imports_nothing_of_the_server(path: Path) -> None:
    for target, line in _internal_imports(path):
        assert target in SHARED, f"{path.relative_to(REPO)}:{line} imports treadle.{target}, a server module"
    extras = {"regex"} if path.name == "_text_gate.py" else set()  # the `text-gate` extra, imported lazily
    if path.is_relative_to(CLIENT / "typed"):  # the `dataclasses` extra: betterproto2 and what it brings
        extras = {"betterproto2", "dateutil", "typing_extensions"}
    foreign = _third_party(path) - CLIENT_THIRD_PARTY - extras - set(sys.stdlib_module_names) - {"treadle", "treadle_client"}
    assert not foreign, f"{path.relative_to(REPO)} imports {sorted(foreign)}, which treadle-client does not depend on"


def test_the_loop_never_sees_protobuf_config_or_storage() -> None:
    for path in (ROOT / "loop").rglob("*.py"):
        for target, line in _internal_imports(path):
            assert target not in {"v1", "api", "config", "memory", "app"}, f"{path.name}:{line}"
        assert not {"grpc", "google"} & _third_party(path), path.name


def test_processor_package_surface() -> None:
    import treadle.processors as p

    assert set(p.__all__) == {
        "HOOKS", "MessagesResult", "OutputResult", "ProcessAPIErrorArgs", "ProcessAPIErrorResult",
        "ProcessInputArgs", "ProcessInputStepArgs", "ProcessInputStepResult",
        "ProcessLLMRequestArgs", "ProcessLLMRequestResult", "ProcessLLMResponseArgs",
        "ProcessOutputResultArgs", "ProcessOutputStepArgs", "ProcessOutputStreamArgs",
        "ProcessToolResultArgs", "Processor", "ProcessorStreamWriter", "ProcessorViolation",
        "RunInfo", "StepResult", "implements",
        "TOOL_HOOKS", "AfterToolCallArgs", "BeforeToolCallArgs", "wants_tool",
    }
    for name in p.__all__:
        assert hasattr(p, name), name
