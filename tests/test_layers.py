"""The layers point one way: each imports only from layers below it, with no cycle and no test double below the top.

foundation (``madspy.core``) <- ``madspy.signatures`` <- ``madspy.programs`` <- ``madspy.data``
<- ``madspy.optimizers`` <- the user-facing layer (everything else under ``madspy``: CLI, server,
evaluation harness, reports, benchmarks, the scripted test double), which nothing below imports.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = {
    "core": "madspy.core",
    "signatures": "madspy.signatures",
    "programs": "madspy.programs",
    "data": "madspy.data",
    "optimizers": "madspy.optimizers",
    "madspy": "madspy",
}
LAYERS = ["madspy.core", "madspy.signatures", "madspy.programs", "madspy.data", "madspy.optimizers"]
TOP = len(LAYERS)  # the user-facing layer


def layer(module: str) -> int:
    return next((i for i, prefix in enumerate(LAYERS) if module == prefix or module.startswith(prefix + ".")), TOP)


def modules() -> dict[str, Path]:
    found = {}
    for folder, package in FOLDERS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = path.relative_to(ROOT / folder).with_suffix("").parts
            name = ".".join((package, *parts[:-1])) if parts[-1] == "__init__" else ".".join((package, *parts))
            found[name] = path
    return found


def imports(path: Path) -> set[str]:
    """Every madspy module a file imports, at its top or inside a function."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names |= {f"{node.module}.{a.name}" for a in node.names}  # `from madspy.core import local`
    known = modules()
    return {n for n in names if n in known and n.startswith("madspy")}


def test_every_module_imports_only_its_own_layer_and_those_below():
    wrong = [
        f"{name} (layer {layer(name)}) imports {other} (layer {layer(other)})"
        for name, path in modules().items()
        for other in imports(path)
        if name != "madspy" and layer(other) > layer(name)
    ]
    assert not wrong, "\n".join(wrong)


def test_the_test_double_and_the_cli_are_imported_only_from_the_top():
    users = {name: imports(path) for name, path in modules().items()}
    assert all(n.startswith("madspy.bench.") for n, used in users.items() if "madspy.testing" in used)
    assert not {
        n
        for n, used in users.items()
        if any(u.startswith("madspy.cli") for u in used) and not n.startswith("madspy.cli")
    }


def test_no_import_cycle():
    graph = {name: imports(path) - {name} for name, path in modules().items()}
    done: set[str] = set()

    def visit(name: str, path: tuple[str, ...]) -> None:
        if name in path:
            cycle = " -> ".join((*path[path.index(name) :], name))
            pytest.fail(f"import cycle: {cycle}")
        if name in done:
            return
        for other in graph.get(name, ()):
            if not other.startswith(name + "."):  # a package importing its own modules is not a cycle
                visit(other, (*path, name))
        done.add(name)

    for name in graph:
        visit(name, ())


@pytest.mark.parametrize("index", range(TOP))
def test_importing_a_layer_loads_nothing_above_it(index):
    mine = [name for name in modules() if layer(name) == index]
    code = (
        "import sys\n"
        + "".join(f"import {name}\n" for name in mine)
        + "print('\\n'.join(m for m in sys.modules if m.startswith('madspy')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    above = sorted(m for m in done.stdout.split() if m != "madspy" and layer(m) > index)
    assert not above, f"importing {LAYERS[index]} loaded {above}"
