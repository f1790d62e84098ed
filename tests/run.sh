#!/usr/bin/env bash
# Runs every test: the protobuf lint and breaking-change check, the type check, then the whole
# Python suite.
# Sets up what is missing first (idempotent): .venv with the project installed, and buf.
# Usage: bash tests/run.sh [pytest args...]
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

if [[ ! -x .venv/bin/treadle ]] || ! .venv/bin/python -c "import treadle, treadle_client, pytest, grpc_tools, mypy" 2>/dev/null; then
  python3 -m venv .venv
  .venv/bin/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
fi
if [[ ! -x .ci/tools/node_modules/.bin/buf ]]; then
  npm ci --prefix .ci/tools --no-audit --no-fund
fi

.ci/lint
.venv/bin/python -m mypy
.venv/bin/python -m pytest -q "$@"
