"""Layering is enforced: the import contracts in .importlinter hold, and no module imports
another module's private names (a leading underscore means "this module only")."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_import_contracts_hold():
    exe = shutil.which("lint-imports") or str(Path(sys.executable).parent / "lint-imports")
    if not Path(exe).exists():
        pytest.fail("lint-imports is missing: install the test extra (pip install -e '.[test]')")
    out = subprocess.run([exe, "--config", str(ROOT / ".importlinter"), "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout[-6000:] + out.stderr[-2000:]
    assert "BROKEN" not in out.stdout and "Contracts: 4 kept, 0 broken" in out.stdout, out.stdout[-3000:]


def _module_name(path: Path, base: Path) -> str:
    parts = path.relative_to(base).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def private_imports(root: Path = ROOT / "icmlgym") -> list[str]:
    """``from icmlgym.x import _name`` and ``module._name`` across icmlgym modules (the module's own names excepted)."""
    found = []
    base = root.parent
    for path in sorted(root.rglob("*.py")):
        here = _module_name(path, base)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        modules: dict[str, str] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("icmlgym") and node.module != here:
                for a in node.names:
                    if a.name.startswith("_") and not a.name.startswith("__"):
                        found.append(f"{path.relative_to(base)}:{node.lineno}: from {node.module} import {a.name}")
                    modules[a.asname or a.name] = f"{node.module}.{a.name}"
            elif isinstance(node, ast.Import):
                for a in node.names:
                    if a.name.startswith("icmlgym"):
                        modules[a.asname or a.name.split(".")[0]] = a.name
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")
                    and isinstance(node.value, ast.Name) and node.value.id in modules):
                found.append(f"{path.relative_to(base)}:{node.lineno}: {node.value.id}.{node.attr}")
    return found


# Known exceptions, each with the reason it cannot change now.
ALLOWED_PRIVATE = {
    # zoo/skills.py is in its shipped weights' code hash (skill-lm, 862 s to retrain): editing it to
    # ask the registry through a public call would invalidate the weights; it changes at the next re-ship
    "icmlgym/zoo/skills.py: registry._MEMBERS",
}


def test_no_private_cross_module_imports():
    found = private_imports()
    assert [f for f in found if _without_line(f) not in ALLOWED_PRIVATE] == []


def _without_line(found: str) -> str:
    path, _line, rest = found.split(":", 2)
    return f"{path}:{rest}"


def test_the_private_import_check_catches_one(tmp_path):
    pkg = tmp_path / "icmlgym"
    pkg.mkdir()
    (pkg / "a.py").write_text("from icmlgym.b import _helper\nimport icmlgym.c as c\nx = c._TABLE\n")
    found = private_imports(pkg)
    assert any("from icmlgym.b import _helper" in f for f in found) and any("c._TABLE" in f for f in found)
