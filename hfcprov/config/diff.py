"""Semantic diff of two config trees, by TLV path (``24[1].35.2`` is the TargetBuffer of the
second upstream flow); values compared as typed values, so form and byte order do not matter."""

from __future__ import annotations

from hfcprov.config.dictionary import ROOT, Spec, children_for
from hfcprov.config.tree import ConfigTree, Tlv
from hfcprov.config.types import hex_text


def flatten(tree: ConfigTree) -> dict[str, tuple[str, str]]:
    """{path: (name, value shown as in the text form)} for every leaf; compound TLVs by their leaves."""
    out: dict[str, tuple[str, str]] = {}
    _walk(tree.tlvs, ROOT, "", out)
    return out


def _walk(nodes: list[Tlv], parent: Spec | None, prefix: str, out: dict) -> None:
    seen: dict[int, int] = {}
    kids = {} if parent is None else children_for(parent, nodes) if parent.vendor_specific else parent.children
    for node in nodes:
        k = seen.get(node.code, 0)
        seen[node.code] = k + 1
        key = f"{prefix}{node.code}" + (f"[{k}]" if k else "")
        spec = kids.get(node.code)
        if node.compound:
            if not node.children:
                out[key] = (spec.name if spec else "GenericTLV", "{}")
            _walk(node.children, spec, key + ".", out)
            continue
        if spec is None or isinstance(node.value, (bytes, bytearray)) and spec.type not in ("bytes", "md5_digest"):
            shown = hex_text(node.value) if isinstance(node.value, (bytes, bytearray)) else repr(node.value)
        else:
            shown = spec.vtype.to_text(node.value)
        out[key] = (spec.name if spec else "GenericTLV", shown)


def diff_trees(a: ConfigTree, b: ConfigTree) -> list[str]:
    """Lines ``- path name value`` (only in A), ``+ ...`` (only in B), ``~ path name: old -> new``."""
    fa, fb = flatten(a), flatten(b)
    lines = []
    for key in _ordered(fa, fb):
        if key not in fb:
            lines.append(f"- {key} {fa[key][0]} {fa[key][1]}")
        elif key not in fa:
            lines.append(f"+ {key} {fb[key][0]} {fb[key][1]}")
        elif fa[key] != fb[key]:
            lines.append(f"~ {key} {fa[key][0]}: {fa[key][1]} -> {fb[key][1]}")
    return lines


def _ordered(fa: dict, fb: dict) -> list[str]:
    keys = list(fa)
    keys += [k for k in fb if k not in fa]
    return keys
