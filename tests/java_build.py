"""The Java SDK (``clients/java``) built once per test session, for tests that run Java processes.

``mvn -q test-compile`` compiles the SDK and its test programs (``src/test/java``: the seed
processors, a tool, an agent client, ...) and writes their dependency classpath; when
``tests/run.sh`` has just run ``mvn verify``, this is an up-to-date check. Needs ``mvn`` and a JDK
17+.
"""

from __future__ import annotations

import functools
import shutil
import subprocess

import pytest

from tests.remote.procs import ROOT

JAVA_CLIENT = ROOT / "clients" / "java"


@functools.cache
def _build() -> str:
    mvn = shutil.which("mvn")
    if mvn is None or shutil.which("java") is None:
        pytest.fail("`mvn` and `java` (JDK 17+) must be on PATH to build clients/java "
                    "(tests/run.sh and .ci/run install them)")
    proc = subprocess.run([mvn, "-q", "-B", "test-compile"], cwd=JAVA_CLIENT,
                          capture_output=True, text=True)
    assert proc.returncode == 0, f"mvn test-compile failed:\n{proc.stdout}{proc.stderr}"
    target = JAVA_CLIENT / "target"
    deps = (target / "test-classpath.txt").read_text().strip()
    return ":".join([str(target / "classes"), str(target / "test-classes"), deps])


def java_command(main_class: str, *args: str) -> list[str]:
    """The command that runs ``main_class`` (from the SDK's test programs) with ``args``."""
    return ["java", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp", _build(), main_class, *args]


@pytest.fixture(scope="session")
def java_build() -> str:
    """The classpath of the built SDK and its test programs (built once per session)."""
    return _build()
