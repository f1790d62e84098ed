#!/usr/bin/env bash
# Runs every test: the protobuf lint and breaking-change check, the TypeScript, Go and Java SDKs'
# own tests, the type check, then the whole Python suite under coverage (report printed at the
# end), which drives the server with processes in every language.
# Sets up what is missing first (idempotent): .venv with the project installed, buf and
# protoc-gen-es, clients/typescript/node_modules, and the Go plugins in .ci/tools/bin.
# Usage: bash tests/run.sh [pytest args...]
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
# Go's usual install place, for shells whose PATH lacks it.
if ! command -v go >/dev/null 2>&1 && [[ -x /usr/local/go/bin/go ]]; then
  export PATH="/usr/local/go/bin:$PATH"
fi

# Reinstall when pyproject.toml changed since the last install (new dependencies).
if [[ ! -x .venv/bin/treadle || pyproject.toml -nt .venv/.installed ]]; then
  python3 -m venv .venv
  # As in the README's quick start: llama.cpp built portably for the embedded models.
  CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF -DLLAVA_BUILD=OFF" \
    .venv/bin/python -m pip install --quiet --disable-pip-version-check -e '.[dev,local]'
  touch .venv/.installed
fi
if [[ ! -x .ci/tools/node_modules/.bin/buf || ! -x .ci/tools/node_modules/.bin/protoc-gen-es ]]; then
  npm ci --prefix .ci/tools --no-audit --no-fund
fi
# The TypeScript test processes (tests/remote/ts) run with tsx from clients/typescript; reinstall
# when the lock file is newer than the last install.
ts=clients/typescript
if [[ ! -x $ts/node_modules/.bin/tsx || $ts/package-lock.json -nt $ts/node_modules/.package-lock.json ]]; then
  npm ci --prefix "$ts" --no-audit --no-fund
fi
# The pinned Go code generators (tests/test_generated_code.py regenerates clients/go/gen/); a
# no-op when installed. The Go test processor's modules download in its `go build`.
.ci/go-tools

.ci/lint
# The TypeScript SDK's own tests (builds clients/typescript/dist first).
npm test --prefix "$ts"
# The Go SDK's own tests (in-process fake servers; modules download on the first run).
(cd clients/go && go vet ./... && go test ./...)
# The Java SDK's own tests (JUnit 5; dev.treadle.v1 is generated from proto/ in the build, protoc
# and the gRPC plugin come as Maven artifacts). It also compiles the Java test programs the
# Python suite runs (tests/java_build.py then only checks they are up to date).
(cd clients/java && mvn -q -B verify)
.venv/bin/python -m mypy

# PostgreSQL for the storage and memory tests, which run on SQLite and on PostgreSQL: a throwaway
# unprivileged cluster (.ci/postgres), stopped on exit. Under CI=true one that cannot start fails
# the run; by hand the tests then run on SQLite only.
if [[ -z "${TREADLE_TEST_DATABASE_URL:-}" ]]; then
  if pg_env="$(.ci/postgres start)"; then
    while IFS='=' read -r name value; do export "$name=$value"; done <<<"$pg_env"
    trap '.ci/postgres stop "$TREADLE_PG_DIR"' EXIT
  elif [[ "${CI:-}" == "true" ]]; then
    echo "tests/run.sh: PostgreSQL could not start; the storage tests need it" >&2
    exit 1
  fi
fi
# The suite runs under coverage, child processes included ([tool.coverage] in pyproject.toml);
# the line-coverage report of server/treadle and clients/python follows, pass or fail.
rm -f .coverage .coverage.*
status=0
.venv/bin/python -m coverage run -m pytest -q "$@" || status=$?
.venv/bin/python -m coverage combine -q
.venv/bin/python -m coverage report
exit "$status"
