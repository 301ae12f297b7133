"""No import circle inside hfcprov/, and no private name imported across its modules. A module may not
reach itself through the modules it imports, counting imports made inside functions (a deferred import
holds a circle open, it does not break it). A package's __init__ may import its own submodules."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.support import REPO

PACKAGE = REPO / "hfcprov"


def module_names(root: Path) -> dict[str, Path]:
    names = {}
    for path in root.rglob("*.py"):
        parts = path.relative_to(root.parent).with_suffix("").parts
        names[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return names


def _owner(name: str, known: dict) -> str | None:
    """The hfcprov module an imported name lives in (``hfcprov.queue.pie.Pie`` -> ``hfcprov.queue.pie``)."""
    while name:
        if name in known:
            return name
        name = name.rpartition(".")[0]
    return None


def imported(name: str, path: Path, known: dict) -> set[str]:
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: climb from this module's package
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            targets.add(base)
            targets.update(f"{base}.{alias.name}" for alias in node.names)
    edges = set()
    for target in targets:
        owner = _owner(target, known)
        # a package and its own submodules (either way round) are one unit here
        if owner and owner != name and not owner.startswith(name + ".") and not name.startswith(owner + "."):
            edges.add(owner)
    return edges


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Each group of modules that reach one another, found by following edges from every module."""
    reach = {}
    for start in graph:
        seen, todo = set(), list(graph[start])
        while todo:
            node = todo.pop()
            if node not in seen:
                seen.add(node)
                todo.extend(graph.get(node, ()))
        reach[start] = seen
    groups = {frozenset(m for m in graph if m in reach[start] and start in reach[m]) | {start}
              for start in graph if start in reach[start]}
    return sorted(sorted(group) for group in groups)


def test_the_circle_finder_sees_a_deferred_circle_and_ignores_a_package_init(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from pkg import sub\n")
    (pkg / "sub" / "__init__.py").write_text("from pkg.sub import a\n")
    (pkg / "sub" / "a.py").write_text("from pkg import b\n")
    (pkg / "b.py").write_text("def f():\n    from .sub.a import x\n")
    (pkg / "c.py").write_text("import pkg.b\n")
    known = module_names(pkg)
    graph = {name: imported(name, path, known) for name, path in known.items()}
    assert circles(graph) == [["pkg.b", "pkg.sub.a"]]


def test_no_import_circle_inside_hfcprov():
    known = module_names(PACKAGE)
    graph = {name: imported(name, path, known) for name, path in known.items()}
    found = circles(graph)
    assert not found, "import circles: " + "; ".join(" <-> ".join(group) for group in found)


def test_no_private_name_is_imported_from_another_module():
    """A name with a leading underscore is its module's own; another module that needs it needs a public name."""
    crossing = []
    for name, path in module_names(PACKAGE).items():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("hfcprov")):
                crossing += [f"{name} imports {node.module}.{alias.name}" for alias in node.names
                             if alias.name.startswith("_") and not alias.name.startswith("__")]
    assert not crossing, "; ".join(crossing)
