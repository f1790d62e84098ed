"""The Go SDK's test programs (``clients/go/internal/*``), each built once per session."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

GO_MODULE = Path(__file__).resolve().parents[2] / "clients" / "go"

GoBuild = Callable[[str], Path]


@pytest.fixture(scope="session")
def go_build(tmp_path_factory: pytest.TempPathFactory) -> GoBuild:
    """``go_build("seedprocessors")``: the binary of ``clients/go/internal/seedprocessors``."""
    built: dict[str, Path] = {}

    def build(program: str) -> Path:
        if program not in built:
            go = shutil.which("go")
            if go is None:
                pytest.fail("the `go` command is not on PATH: install Go 1.26+ to build "
                            f"clients/go/internal/{program} (tests/run.sh and .ci/run need it too)")
            out = tmp_path_factory.mktemp("go") / program
            proc = subprocess.run([go, "build", "-o", str(out), f"./internal/{program}"],
                                  cwd=GO_MODULE, capture_output=True, text=True)
            assert proc.returncode == 0, f"go build failed:\n{proc.stdout}{proc.stderr}"
            built[program] = out
        return built[program]

    return build
