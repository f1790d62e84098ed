"""The fenced code blocks of the user-facing docs, and which test runs each.

A test module claims the blocks it runs with a module-level literal

    DOC_BLOCKS = {("docs/memory.md", "python", 0): "test_the_python_example_carries_the_conversation"}

keyed by (file from the repository's root, language, index among that file's blocks of that
language) and naming a test function of the same module. The dict may use the module's own
string constants (``DOC = "docs/memory.md"``) and comprehensions over ``range``. ``tests/test_doc_blocks.py`` reads every
``tests/test_*.py`` (without importing it) and fails on a block nobody claims, on a claim of a
block that does not exist, and on a claim naming a test the module does not have. A block that
moves or changes language therefore fails the suite until its test follows it.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_ADDRESS = "127.0.0.1:50051"

_FENCE = re.compile(r"^( *)```([\w-]*)\n(.*?)^\1```", re.S | re.M)

Key = tuple[str, str, int]


@dataclass(frozen=True)
class Block:
    file: str
    lang: str
    index: int
    text: str

    @property
    def key(self) -> Key:
        return (self.file, self.lang, self.index)


def documents() -> list[str]:
    """Every file whose blocks a user may copy, besides README.md (tests/test_readme.py)."""
    found = [*ROOT.glob("docs/*.md"), *ROOT.glob("examples/**/*.md"), *ROOT.glob("clients/*/README.md")]
    return sorted(str(p.relative_to(ROOT)) for p in found if "node_modules" not in p.parts)


def blocks(file: str) -> list[Block]:
    """The fenced blocks of ``file``, in order, without the indentation of a list item."""
    out: list[Block] = []
    seen: dict[str, int] = {}
    for indent, lang, text in _FENCE.findall((ROOT / file).read_text()):
        lang = lang or "text"
        index = seen[lang] = seen.get(lang, -1) + 1
        body = "\n".join(line.removeprefix(indent) for line in text.splitlines()) + "\n"
        out.append(Block(file, lang, index, body))
    return out


def block(file: str, lang: str, index: int = 0) -> str:
    """The text of one block (the test that runs it names it by its DOC_BLOCKS key)."""
    found = [b.text for b in blocks(file) if b.lang == lang and b.index == index]
    assert found, f"{file} has no {lang} block #{index}"
    return found[0]


def claims() -> dict[Key, list[str]]:
    """Every claim of every test module: key -> ["tests/test_x.py::test_name", ...]."""
    out: dict[Key, list[str]] = {}
    for path in sorted((ROOT / "tests").glob("test_*.py")):
        tree = ast.parse(path.read_text(), str(path))
        tests = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        constants: dict[str, Any] = {}
        for node in tree.body:
            if not isinstance(node, (ast.Assign, ast.AnnAssign)) or node.value is None:
                continue
            target = node.target if isinstance(node, ast.AnnAssign) else node.targets[0]
            if isinstance(target, ast.Name) and target.id == "DOC_BLOCKS":
                code = compile(ast.Expression(node.value), str(path), "eval")
                claimed = eval(code, {"__builtins__": {"range": range}, **constants})  # noqa: S307
                for key, test in claimed.items():
                    name = f"tests/{path.name}::{test}"
                    assert test in tests, f"{name} claims {key} but the module has no such test"
                    out.setdefault(tuple(key), []).append(name)
            elif isinstance(target, (ast.Name, ast.Tuple)):  # NAME = "..." or A, B = "...", "..."
                names = [target] if isinstance(target, ast.Name) else target.elts
                values = [node.value] if isinstance(target, ast.Name) else getattr(node.value, "elts", [])
                for n, v in zip(names, values):
                    if isinstance(n, ast.Name) and isinstance(v, ast.Constant) and isinstance(v.value, str):
                        constants[n.id] = v.value
    return out
