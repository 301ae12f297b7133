"""``hfcprov config``: encode, decode, verify, diff DOCSIS config files; list the TLV dictionary."""

from __future__ import annotations

import fnmatch
import sys
from pathlib import Path

import click

from hfcprov.errors import HfcprovError

FORMATS = ("text", "yaml", "json")
SUFFIX = {"text": ".cfg", "yaml": ".yaml", "json": ".json"}


def _secret(path):
    from hfcprov.config import read_secret

    return read_secret(path) if path else None


def _read(path, secret=None, strict=False):
    """The config at ``path``; a lenient decode's warnings go to stderr, one line each."""
    from hfcprov.config import read_config

    tree = read_config(path, secret, strict=strict)
    for warning in tree.warnings:
        click.echo(f"hfcprov: warning: {warning}", err=True)
    return tree


def _load_mibs(dirs) -> None:
    """--mib-dir folders compiled with pysmi together with mibs/ and the standard modules
    (``hfcprov.mib.load_mib_dirs``, cached by digest); their names join hfcprov.mib's index."""
    if not dirs:
        return
    from hfcprov import mib

    for folder in map(Path, dirs):
        if not folder.is_dir():
            raise HfcprovError(f"{folder}: --mib-dir is not a folder")
    mib.load_mib_dirs(dirs)


MIB_DIR = click.option("--mib-dir", "mib_dirs", multiple=True, type=click.Path(file_okay=False),
                       help="Also resolve OID names from the MIB files in this folder (repeatable).")
STRICT = click.option("--strict", is_flag=True, help="Binary input: refuse odd fields and a wrong or missing CM MIC"
                                                     " instead of warning.")


def _outputs(sources: tuple[str, ...], out: str | None, suffix: str) -> list[Path | None]:
    """One output path per source: OUT itself for one source, OUT/<stem><suffix> for several."""
    if out is None:
        return [None] * len(sources)
    if len(sources) == 1 and not Path(out).is_dir():
        return [Path(out)]
    if Path(out).exists() and not Path(out).is_dir():
        raise HfcprovError(f"{out}: with several inputs, -o must be a directory")
    names = [Path(out) / (Path(s).stem + suffix) for s in sources]
    if len(set(names)) != len(names):
        raise HfcprovError(f"two inputs would both be written to the same file in {out}")
    return names


@click.group()
def config():
    """Encode, decode, verify and diff DOCSIS config files (text, YAML, JSON or binary)."""


@config.command()
@click.argument("sources", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("-o", "--output", "out", required=True, help="Output file, or a directory for several inputs.")
@click.option("--secret-file", type=click.Path(dir_okay=False), help="CMTS shared secret (adds the CMTS MIC).")
@click.option("--mta", is_flag=True, help="PacketCable MTA file (also chosen when the first TLV is MtaConfigDelimiter).")
@click.option("--hash", "mta_hash", type=click.Choice(["na", "eu"]),
              help="MTA file: add the configuration hash (PacketCable pktcMtaDevProvConfigHash, or Euro-PacketCable).")
@MIB_DIR
@STRICT
def encode(sources, out, secret_file, mta, mta_hash, mib_dirs, strict):
    """Build binary config files from text/YAML/JSON (or re-encode binary) SOURCES."""
    from hfcprov.config import ConfigError
    from hfcprov.config import encode as encode_tree
    from hfcprov.config.mta import encode_mta
    from hfcprov.fileio import atomic_write

    _load_mibs(mib_dirs)
    if mta_hash:
        mta = True
    if mta and secret_file:
        raise HfcprovError("an MTA file has no CMTS MIC: --secret-file is for CM files")

    secret = _secret(secret_file)
    targets = _outputs(sources, out, ".cm")
    # Encode everything first: one bad input leaves no output at all.
    blobs = []
    for src in sources:
        try:
            tree = _read(src, strict=strict)
            blobs.append(encode_mta(tree, mta_hash) if mta else encode_tree(tree, secret))
        except ConfigError as err:
            raise err.at(source=str(src))
    for target, blob in zip(targets, blobs):
        atomic_write(target, blob)
    if len(sources) > 1:
        click.echo(f"wrote {len(blobs)} files to {out}")


@config.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True)
@click.option("--secret-file", type=click.Path(dir_okay=False), help="Verify both MICs with this shared secret.")
@click.option("-o", "--output", "out", help="Write here (a directory for several inputs) instead of stdout.")
@click.option("--names", is_flag=True, help="Text form: show SNMP OIDs by their MIB names (from mibs/).")
@click.option("--c-tool", "c_tool", is_flag=True,
              help="Text form: write what the docsis C tool reads (String/HexString, IPAddress, ObjectID, addr/port).")
@MIB_DIR
@STRICT
def decode(files, fmt, secret_file, out, names, c_tool, mib_dirs, strict):
    """Show config FILES (binary or any text form) as text, YAML or JSON.

    Binary files are decoded leniently: a field that does not fit its type is shown as a GenericTLV
    and named in a warning (byte offset, TLV path), as is a wrong or missing CM MIC."""
    from hfcprov.config import render_json, render_text, render_yaml

    _load_mibs(mib_dirs)
    from hfcprov.fileio import atomic_write

    render = {"text": lambda t: render_text(t, names=names, c_tool=c_tool), "yaml": render_yaml,
              "json": render_json}[fmt]
    secret = _secret(secret_file)
    targets = _outputs(files, out, SUFFIX[fmt])
    texts = [render(_read(f, secret, strict)) for f in files]
    for f, target, text in zip(files, targets, texts):
        if target is None:
            if len(files) > 1:
                click.echo(f"# {f}")
            click.echo(text, nl=False)
        else:
            atomic_write(target, text)


@config.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--secret-file", type=click.Path(dir_okay=False), help="CMTS shared secret (CM files).")
@click.option("--json", "as_json", is_flag=True,
              help="Print one JSON list: per file, its kind (cm or mta), ok, and the error if not ok.")
def verify(files, secret_file, as_json):
    """Check the CM MIC and CMTS MIC of binary FILES; of an MTA file, its delimiters and configuration hash."""
    import json

    from hfcprov.config import ConfigError
    from hfcprov.config import verify as verify_bytes
    from hfcprov.config.mta import is_mta, verify_mta

    secret = _secret(secret_file)
    failed, results = [], []
    for f in files:
        try:
            data = Path(f).read_bytes()
        except OSError as err:
            raise HfcprovError(f"{f}: cannot read: {err.strerror}") from None
        result = {"file": f, "kind": "mta" if is_mta(data) else "cm", "ok": False}
        results.append(result)
        try:
            if result["kind"] == "mta":
                result["config_hash"] = verify_mta(data)
                result["ok"] = True
                if not as_json:
                    click.echo(f"{f}: OK (MTA file, configuration hash {result['config_hash']})")
                continue
            if secret is None:
                raise ConfigError("a CM file's CMTS MIC needs --secret-file")
            verify_bytes(data, secret)
            result["ok"] = True
            if not as_json:
                click.echo(f"{f}: OK (CM MIC and CMTS MIC)")
        except ConfigError as err:
            result["error"] = str(err)
            failed.append(f"{f}: {err}")
    if as_json:
        click.echo(json.dumps(results, indent=2))
    if failed:
        if len(failed) > 1 or len(files) > 1:
            for line in failed[:-1]:
                click.echo(f"hfcprov: error: {line}", err=True)
        raise HfcprovError(failed[-1])


@config.command()
@click.argument("a", type=click.Path(dir_okay=False))
@click.argument("b", type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help='Print {"a", "b", "same", "differences": [...]} instead.')
def diff(a, b, as_json):
    """Semantic differences between two configs (any forms), by TLV path. Exit 1 if they differ."""
    import json

    from hfcprov.config.diff import diff_trees

    lines = diff_trees(_read(a), _read(b))
    if as_json:
        click.echo(json.dumps({"a": a, "b": b, "same": not lines, "differences": lines}, indent=2))
    for line in [] if as_json else lines:
        click.echo(line)
    if lines:
        sys.exit(1)  # like diff(1); SystemExit passes through the CLI root untouched


@config.command()
@click.argument("pattern", required=False)
def tlvs(pattern):
    """List the TLV dictionary (path, name, type, length, range, spec); PATTERN filters by name or path."""
    from hfcprov.config.dictionary import ROOT, tlv_line

    for spec in ROOT.walk():
        line = tlv_line(spec)
        if pattern and not _matches(pattern, spec, line):
            continue
        click.echo(line)


def _matches(pattern: str, spec, line: str) -> bool:
    p = pattern.lower()
    if any(ch in p for ch in "*?["):
        return fnmatch.fnmatch(spec.name.lower(), p) or fnmatch.fnmatch(spec.path, p)
    return p in spec.name.lower() or spec.path == p or spec.path.startswith(p + ".") or \
        any(p in a.lower() for a in spec.aliases)
