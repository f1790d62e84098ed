"""One command for every benchmark: ``python -m bench``.

    python -m bench [--quick | --smoke] [--rounds N] [--only a,b] [--ab REV] [--json FILE]
                    [--readme] [--no-framework] [--database URL]

Runs every scenario of ``bench/scenarios.py`` (in process, the gRPC edge, memory on SQLite and
PostgreSQL, remote processors, signals across replicas), each in a fresh process, ``--rounds``
times, and prints one table: each number next to the floor measured in the same process and
their ratio, with the target and whether it is met. Medians over rounds.

The framework's own benchmark (``shared/bench/mastra``, run with ``node`` after ``npm ci`` in a
temporary copy) runs in every round just before the in-process scenario, on the same workload.

``--ab REV`` runs every scenario on REV too (a temporary git worktree; the bench code is this
one, the server code is REV's), alternating which goes first each round, and adds REV's value
and the ratio this / REV to the table.

PostgreSQL is ``--database``, else ``TREADLE_TEST_DATABASE_URL``, else a throwaway cluster started
with ``.ci/postgres``. ``--readme`` writes the table into ``bench/README.md``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FRAMEWORK = ROOT.parent / "shared" / "bench" / "mastra"
SCENARIOS = ("inproc", "grpc", "memory-sqlite", "memory-postgresql", "remote", "signals")
OPS = {"<=": lambda a, b: a <= b, ">=": lambda a, b: a >= b}


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# --- PostgreSQL and the other revision --------------------------------------------------------

@contextlib.contextmanager
def postgres(given: str | None) -> Iterator[str]:
    url = given or os.environ.get("TREADLE_TEST_DATABASE_URL")
    if url:
        yield url
        return
    out = subprocess.run([str(ROOT / ".ci" / "postgres"), "start"], capture_output=True, text=True, check=True)
    values = dict(line.split("=", 1) for line in out.stdout.split() if "=" in line)
    try:
        yield values["TREADLE_TEST_DATABASE_URL"].strip("'\"")
    finally:
        subprocess.run([str(ROOT / ".ci" / "postgres"), "stop", values["TREADLE_PG_DIR"].strip("'\"")],
                       check=False, capture_output=True)


@contextlib.contextmanager
def worktree(rev: str) -> Iterator[Path]:
    """REV checked out in a temporary worktree, removed afterwards."""
    path = Path(tempfile.mkdtemp(prefix="treadle-ab-")) / "tree"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(path), rev],
                   check=True, capture_output=True)
    try:
        yield path
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(path)],
                       check=False, capture_output=True)
        shutil.rmtree(path.parent, ignore_errors=True)


def scenario(tree: Path, name: str, size: str, database: str) -> list[dict[str, Any]]:
    """One scenario in a fresh process, on ``tree``'s server code and this bench code."""
    env = dict(os.environ)
    paths = [str(tree / "server"), str(tree / "clients" / "python"), str(ROOT)]
    env["PYTHONPATH"] = os.pathsep.join(paths + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env["TREADLE_BENCH_TREE"] = str(tree)
    cmd = [sys.executable, str(ROOT / "bench" / "scenarios.py"), name, size, "--database", database]
    out = subprocess.run(cmd, env=env, cwd=str(tree), capture_output=True, text=True, timeout=900)
    if out.returncode != 0:
        tail = "\n".join(out.stderr.strip().splitlines()[-15:])
        raise RuntimeError(f"scenario {name} on {tree} failed ({out.returncode}):\n{tail}")
    rows: list[dict[str, Any]] = json.loads(out.stdout.strip().splitlines()[-1])
    return rows


# --- the framework's runner -----------------------------------------------------------------

def framework_dir() -> tuple[Path | None, str]:
    """A copy of the framework's runner with its node_modules, or None and why not."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        return None, "node/npm not installed"
    if not (FRAMEWORK / "bench.mjs").exists():
        return None, f"no framework runner at {FRAMEWORK}"
    if (FRAMEWORK / "node_modules").is_dir():
        return FRAMEWORK, "in place"
    copy = Path(tempfile.gettempdir()) / "treadle-bench-framework"
    if not (copy / "node_modules" / "@mastra" / "core").is_dir():
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(FRAMEWORK, copy, ignore=shutil.ignore_patterns("node_modules", "results"))
        for p in [copy, *copy.rglob("*")]:
            p.chmod(p.stat().st_mode | 0o200)
        out = subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=copy, capture_output=True, text=True)
        if out.returncode != 0:
            return None, "npm ci failed: " + (out.stderr.strip().splitlines() or ["?"])[-1]
    return copy, "temporary copy"


def framework(path: Path, size: str) -> list[dict[str, Any]]:
    args = {"smoke": ["--rounds", "1", "--batch", "2", "--warmup", "2"],
            "quick": ["--rounds", "2", "--batch", "5", "--warmup", "5"],
            "full": ["--rounds", "5", "--batch", "25", "--warmup", "40"]}[size]
    with tempfile.TemporaryDirectory() as tmp:
        out_file = Path(tmp) / "out.json"
        cmd = ["node", "bench.mjs", "--only", "seq", "--scaling", "50,800", *args, "--out", str(out_file)]
        subprocess.run(cmd, cwd=path, check=True, capture_output=True, timeout=900)
        res = json.loads(out_file.read_text())["sequential"]
    s = "framework"
    rows = [{"scenario": s, "name": f"ms per run, config {k}", "value": v["msPerRun"]["median"], "unit": "ms"}
            for k, v in res.items() if isinstance(v, dict) and "msPerRun" in v]
    rows.append({"scenario": s, "name": "baseline µs per chunk (fit over 50/200/800)",
                 "value": res["baselineFit"]["usPerChunk"], "unit": "µs"})
    over = res["processorOverheadUsPerChunk"]
    rows.append({"scenario": s, "name": "µs per chunk per pass-through processor ((b5-b0)/N/5)",
                 "value": over["b5 vs b0 ((b5-b0)/N/5)"]["median"], "unit": "µs"})
    rows.append({"scenario": s, "name": "µs per chunk per pass-through processor ((b5-b1)/N/4)",
                 "value": over["marginal ((b5-b1)/N/4)"]["median"], "unit": "µs"})
    return rows


# --- aggregation and the table -----------------------------------------------------------------

def aggregate(rounds: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Median of each row's numbers over rounds; rows keep the first round's order."""
    by_key: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for rows in rounds:
        for r in rows:
            by_key.setdefault((r["scenario"], r["name"]), []).append(r)
    out = []
    for samples in by_key.values():
        r = dict(samples[0])
        for key in ("value", "floor", "ratio", "difference"):
            values = [s[key] for s in samples if s.get(key) is not None]
            r[key] = statistics.median(values) if values else None
        r["rounds"] = len(samples)
        target = r.get("target")
        if target and r.get(target[0]) is not None:
            r["met"] = OPS[target[1]](r[target[0]], target[2])
        else:
            r["met"] = None
        out.append(r)
    return out


def framework_ratios(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Our in-process numbers as ratios to the framework's, same workload, same rounds."""
    ours = {r["name"]: r for r in rows if r["scenario"] == "inproc"}
    out = []
    for r in rows:
        if r["scenario"] == "framework" and r["name"] in ours and r["value"]:
            mine = ours[r["name"]]["value"]
            out.append({"scenario": "vs framework", "name": r["name"], "value": mine, "unit": r["unit"],
                        "floor": r["value"], "ratio": mine / r["value"], "target": None, "met": None,
                        "rounds": r["rounds"]})
    return out


def _num(x: Any) -> str:
    if x is None:
        return ""
    if isinstance(x, float):
        if abs(x) >= 1000:
            return f"{x:,.0f}"
        return f"{x:.3g}" if abs(x) < 10 else f"{x:.1f}"
    return str(x)


def _target(r: dict[str, Any]) -> str:
    t = r.get("target")
    if not t:
        return ""
    label = {"ratio": "x", "value": "", "difference": " ms over the floor"}[t[0]]
    mark = {True: "met", False: "**not met**", None: ""}[r.get("met")]
    return f"{t[1]} {t[2]}{label} {mark}".strip()


def table(rows: list[dict[str, Any]], base: list[dict[str, Any]] | None, rev: str | None) -> str:
    head = "| scenario | measure | value | unit | floor | ratio (or ms over the floor) | target |"
    line = "|---|---|---:|---|---:|---:|---|"
    base_by = {(r["scenario"], r["name"]): r for r in base or []}
    if base is not None:
        head += f" {rev} value | {rev} ratio | this / {rev} |"
        line += "---:|---:|---:|"
    out = [head, line]
    for r in rows:
        ratio = r.get("ratio")
        if r.get("difference") is not None:
            ratio = r["difference"]
        cells = [r["scenario"], r["name"], _num(r["value"]), r["unit"], _num(r.get("floor")), _num(ratio), _target(r)]
        if base is not None:
            b = base_by.get((r["scenario"], r["name"]), {})
            change = r["value"] / b["value"] if b.get("value") else None
            base_ratio = b["difference"] if b.get("difference") is not None else b.get("ratio")
            cells += [_num(b.get("value")), _num(base_ratio), _num(change)]
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


def write_readme(text: str) -> None:
    readme = ROOT / "bench" / "README.md"
    start, end = "<!-- bench table -->", "<!-- /bench table -->"
    current = readme.read_text() if readme.exists() else ""
    block = f"{start}\n{text}\n{end}"
    if start in current and end in current:
        current = current[: current.index(start)] + block + current[current.index(end) + len(end):]
    else:
        current = current.rstrip("\n") + "\n\n" + block + "\n"
    readme.write_text(current)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="about a minute per round")
    size.add_argument("--smoke", action="store_true", help="tiny sizes: checks that every scenario runs")
    parser.add_argument("--rounds", type=int, help="rounds (default 1 with --quick/--smoke, else 3)")
    parser.add_argument("--only", help=f"comma-separated scenarios out of {', '.join(SCENARIOS)}")
    parser.add_argument("--ab", metavar="REV", help="also run every scenario on REV, interleaved")
    parser.add_argument("--json", type=Path, default=ROOT / "bench" / "results" / "latest.json")
    parser.add_argument("--readme", action="store_true", help="write the table into bench/README.md")
    parser.add_argument("--no-framework", action="store_true", help="skip the framework's runner")
    parser.add_argument("--database", help="postgresql:// URL (default: a throwaway cluster)")
    args = parser.parse_args()
    size_name = "smoke" if args.smoke else "quick" if args.quick else "full"
    rounds = args.rounds or (1 if size_name != "full" else 3)
    names = tuple(args.only.split(",")) if args.only else SCENARIOS
    unknown = set(names) - set(SCENARIOS)
    if unknown:
        parser.error(f"unknown scenarios {sorted(unknown)}; choose from {', '.join(SCENARIOS)}")
    started = time.perf_counter()
    framework_note = "skipped (--no-framework)" if args.no_framework else "not run (no inproc scenario)"
    fw_path: Path | None = None
    if not args.no_framework and "inproc" in names:
        fw_path, framework_note = framework_dir()
        if fw_path is None:
            log(f"framework runner not run: {framework_note}")
    results: dict[str, list[list[dict[str, Any]]]] = {"this": [], "base": []}
    with contextlib.ExitStack() as stack:
        database = stack.enter_context(postgres(args.database))
        trees = [("this", ROOT)]
        if args.ab:
            trees.append(("base", stack.enter_context(worktree(args.ab))))
        for r in range(rounds):
            order = trees if r % 2 == 0 else trees[::-1]
            per_tree: dict[str, list[dict[str, Any]]] = {label: [] for label, _ in trees}
            for name in names:
                if name == "inproc" and fw_path is not None:
                    log(f"round {r + 1}/{rounds}: framework runner (node)")
                    try:
                        fw = framework(fw_path, size_name)
                    except (subprocess.SubprocessError, OSError, KeyError, ValueError) as e:
                        framework_note = f"failed: {e}"
                        fw = []
                    for label, _ in trees:
                        per_tree[label] += fw
                for label, tree in order:
                    log(f"round {r + 1}/{rounds}: {name} on {label}")
                    per_tree[label] += scenario(tree, name, size_name, database)
            for label, _ in trees:
                results[label].append(per_tree[label])
    rows = aggregate(results["this"])
    rows += framework_ratios(rows)
    base = None
    if args.ab:
        base = aggregate(results["base"])
        base += framework_ratios(base)
    text = table(rows, base, args.ab)
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    header = (f"`python -m bench{' --' + size_name if size_name != 'full' else ''}"
              f"{' --ab ' + args.ab if args.ab else ''}` at {commit}, {rounds} round(s), "
              f"{os.cpu_count()} cores; the framework's runner: {framework_note}.")
    print(header)
    print()
    print(text)
    report = {"command": sys.argv, "size": size_name, "rounds": rounds, "commit": commit, "ab": args.ab,
              "framework": framework_note, "seconds": time.perf_counter() - started,
              "rows": rows, "base_rows": base, "raw": results, "table": text}
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=2) + "\n")
    log(f"JSON in {args.json} ({report['seconds']:.0f} s)")
    if args.readme:
        write_readme(header + "\n\n" + text)


if __name__ == "__main__":
    main()
