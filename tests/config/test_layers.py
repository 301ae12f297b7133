"""hfcprov.config's modules import one another one way only, and by public names: a module that needs
another's private helper means that helper is in the wrong place (issue 24: codec <-> mta)."""

import ast
from pathlib import Path

import hfcprov.config

CONFIG = Path(hfcprov.config.__file__).parent


def config_imports() -> dict[str, list[tuple[str, list[str]]]]:
    """module -> [(imported hfcprov.config module, names)] for every import, at any depth in the file."""
    out = {}
    for path in CONFIG.glob("*.py"):
        found = []
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("hfcprov.config."):
                found.append((node.module.split(".")[2], [a.name for a in node.names]))
            elif isinstance(node, ast.Import):
                found += [(a.name.split(".")[2], []) for a in node.names if a.name.startswith("hfcprov.config.")]
        out[path.stem] = found
    return out


def test_no_module_of_config_imports_a_private_name_of_another():
    private = [f"{mod} imports {name} from {src}" for mod, found in config_imports().items()
               for src, names in found for name in names if name.startswith("_")]
    assert private == []


def test_config_modules_form_no_import_circle():
    graph = {mod: {src for src, _ in found if src != mod} for mod, found in config_imports().items()}
    graph.pop("__init__", None)  # the package re-exports its modules; none imports the package back

    def reaches(start, goal, seen=()):
        return any(nxt == goal or (nxt not in seen and reaches(nxt, goal, (*seen, nxt)))
                   for nxt in graph.get(start, ()))

    assert [mod for mod in graph if reaches(mod, mod)] == []
