"""hfcprov.sim's modules import each other without loops (registries load parts by name instead)."""

from __future__ import annotations

import ast
from pathlib import Path

import hfcprov.sim

SIM = Path(hfcprov.sim.__file__).parent


def _imports(path: Path) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):  # function-level imports count too
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("hfcprov.sim."):
            out.add(node.module)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("hfcprov.sim."))
    return out


def test_no_import_loops_inside_sim():
    graph = {}
    for path in SIM.rglob("*.py"):
        rel = path.relative_to(SIM.parent.parent).with_suffix("")
        name = ".".join(rel.parts).removesuffix(".__init__")
        graph[name] = _imports(path)
    loops = []

    def visit(node, stack):
        if node in stack:
            loops.append(stack[stack.index(node):] + [node])
            return
        for nxt in sorted(graph.get(node, ())):
            visit(nxt, stack + [node])

    for start in graph:
        if start != "hfcprov.sim":  # the package __init__ only re-exports
            visit(start, [])
    assert not loops, loops[0]
