"""No import circle among the modules of commcomp, models and reductions,
counting imports at module level and inside functions alike.

A package ``__init__`` importing its submodules is no circle by itself: an edge goes to the module
an import names (``from pkg import sub``: to ``pkg.sub``, and to ``pkg`` only for a name ``pkg`` defines),
never to the packages above it, so a
circle through an ``__init__`` means that some module imports its package back.
"""

import ast
import pathlib

import networkx as nx

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGES = ("commcomp", "models", "reductions")
CHECKED = PACKAGES


def module_name(root: pathlib.Path, path: pathlib.Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(root: pathlib.Path, packages) -> nx.DiGraph:
    """Module -> every module of the tree it imports, anywhere in its body."""
    files = {module_name(root, p): p for pkg in packages for p in (root / pkg).rglob("*.py")}
    graph = nx.DiGraph()
    for name, path in files.items():
        graph.add_node(name)
        is_package = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = name.split(".") if is_package else name.split(".")[:-1]
                    base = base[:len(base) - (node.level - 1)]
                    mod = ".".join(base + ([node.module] if node.module else []))
                else:
                    mod = node.module
                # ``from pkg import sub`` needs the submodule; the package itself only for names it defines
                subs = [f"{mod}.{a.name}" for a in node.names]
                targets = [t for t in subs if t in files]
                if len(targets) < len(subs):
                    targets.append(mod)
            else:
                continue
            graph.add_edges_from((name, t) for t in targets if t in files and t != name)
    return graph


def circles(graph, prefixes) -> list[list[str]]:
    return [sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1
            and any(m == p or m.startswith(p + ".") for m in c for p in prefixes)]


def test_no_import_circle():
    assert circles(import_graph(ROOT, PACKAGES), CHECKED) == []


def test_the_scan_sees_a_circle_through_a_function_import(tmp_path):
    pkg = tmp_path / "commcomp"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from .a import f\n")
    (pkg / "a.py").write_text("def f():\n    from .b import g\n    return g\n")
    (pkg / "b.py").write_text("from commcomp.a import f\ng = f\n")
    (pkg / "c.py").write_text("from . import a\n")  # a package importing its submodule: no circle
    assert circles(import_graph(tmp_path, ("commcomp",)), ("commcomp",)) == [["commcomp.a", "commcomp.b"]]


def test_a_submodule_imported_from_its_package_is_no_circle_but_a_name_of_the_package_is(tmp_path):
    pkg = tmp_path / "commcomp"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from .d import h\nfrom .e import k\nvalue = 1\n")
    (pkg / "a.py").write_text("x = 1\n")
    (pkg / "d.py").write_text("from . import a\nh = a.x\n")  # needs a, not the package's names
    (pkg / "e.py").write_text("from . import value\nk = value\n")  # needs the package: a real circle
    assert circles(import_graph(tmp_path, ("commcomp",)), ("commcomp",)) == [["commcomp", "commcomp.e"]]
