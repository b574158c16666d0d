"""Layering, read from the sources: no file of models/ imports reductions (or cli), at import time
or at call time, and no file of commcomp/ imports models or reductions (DESIGN: layering)."""

import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


def imported_packages(path: pathlib.Path) -> set[str]:
    """Top-level packages of every import statement in a file, at any depth (functions too)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "attr", None) ==
             "import_module" and n.args and isinstance(n.args[0], ast.Constant)]
    found.update(str(c.args[0].value).split(".")[0] for c in calls)
    return found


@pytest.mark.parametrize("package, forbidden", [("models", {"reductions", "cli"}),
                                                ("commcomp", {"models", "reductions", "cli"})])
def test_no_upward_imports(package, forbidden):
    bad = {str(p.relative_to(ROOT)): sorted(imported_packages(p) & forbidden)
           for p in sorted((ROOT / package).rglob("*.py")) if imported_packages(p) & forbidden}
    assert bad == {}


def test_the_scan_sees_call_time_imports(tmp_path):
    # the scanner must catch an import inside a function body (what models/ used to do)
    f = tmp_path / "m.py"
    f.write_text("def judge():\n    from reductions.registry import get_task\n    return get_task\n")
    assert "reductions" in imported_packages(f)
