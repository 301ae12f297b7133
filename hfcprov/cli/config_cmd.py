"""``hfcprov config``: encode, decode, verify, diff DOCSIS config files; list the TLV dictionary."""

from __future__ import annotations

import fnmatch
import sys
from pathlib import Path

import click

from hfcprov.cli import config_files, shortcut
from hfcprov.cli.config_files import FORMATS
from hfcprov.cli.options import JSON, MKDIR, SECRET_FILE
from hfcprov.errors import HfcprovError

MIB_DIR = click.option("--mib-dir", "mib_dirs", multiple=True, type=click.Path(file_okay=False),
                       help="Also resolve OID names from the MIB files in this folder (repeatable).")
STRICT = click.option("--strict", is_flag=True, help="Binary input: refuse odd fields and a wrong or missing CM MIC"
                                                     " instead of warning.")
LINT_STRICT = click.option("--strict", is_flag=True,
                           help="Refuse, instead of warning about, what a modem or CMTS refuses (config lint's rules)"
                                " and odd fields of a binary input.")
DOCSIS_VERSION = click.option("--docsis-version", type=click.Choice(["1.0", "1.1", "2.0", "3.0", "3.1", "4.0"]),
                              help="Also name TLVs this DOCSIS version of modem does not know.")


@click.group()
@shortcut.runs()
def config():
    """Encode, decode, verify and diff DOCSIS config files (text, YAML, JSON or binary)."""


@config.command()
@click.argument("sources", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("-o", "--output", "out", required=True, help="Output file, or a directory for several inputs.")
@MKDIR
@SECRET_FILE
@click.option("--no-cmts-mic", "no_cmts_mic", is_flag=True,
              help="Without --secret-file: the files are meant to have no CMTS MIC (no warning).")
@click.option("--mta", is_flag=True, help="PacketCable MTA file (also chosen when the first TLV is MtaConfigDelimiter).")
@click.option("--hash", "mta_hash", type=click.Choice(["na", "eu", "ietf"]),
              help="MTA file: add the configuration hash (PacketCable pktcMtaDevProvConfigHash of PKTC-MTA-MIB, "
                   "Euro-PacketCable's, or PKTC-IETF-MTA-MIB's).")
@click.option("--dialplan", type=click.Path(dir_okay=False),
              help="MTA file: add this PacketCable 2.0 dial plan (pktcEUERSTDMValue.1) as the docsis C tool's -dialplan.")
@click.option("--no-extended-mic", is_flag=True,
              help="Write TLV 43.6 (Extended CMTS MIC) as given and TLV 7 as the pre-3.0 CMTS MIC, as the docsis C "
                   "tool does, instead of computing it with the secret.")
@DOCSIS_VERSION
@MIB_DIR
@LINT_STRICT
@shortcut.runs(config_files.encode_files)
def encode():
    """Build binary config files from text/YAML/JSON (or re-encode binary) SOURCES.

    What a modem or CMTS refuses (the rules of `hfcprov config lint`) is a warning on stderr, or an error
    with --strict. With several SOURCES the files are written, then flushed to disk once before the
    command returns."""


@config.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True)
@SECRET_FILE
@click.option("-o", "--output", "out", help="Write here (a directory for several inputs) instead of stdout.")
@MKDIR
@click.option("--names", is_flag=True, help="Text form: show SNMP OIDs by their MIB names (from mibs/).")
@click.option("--c-tool", "c_tool", is_flag=True,
              help="Text form: write what the docsis C tool reads (String/HexString, IPAddress, ObjectID, addr/port,"
                   " OIDs with a leading dot).")
@MIB_DIR
@STRICT
@shortcut.runs(config_files.decode_files)
def decode():
    """Show config FILES (binary or any text form) as text, YAML or JSON.

    Binary files are decoded leniently: a field that does not fit its type is shown as a GenericTLV
    and named in a warning (byte offset, TLV path), as is a wrong or missing CM MIC."""


@config.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@JSON("the findings (rule, file, line, offset, path, message, section) as one list")
@DOCSIS_VERSION
@MIB_DIR
def lint(files, as_json, docsis_version, mib_dirs):
    """What a CMTS or modem refuses in config FILES (any form): references between flows, classifiers, PHS,
    aggregates and MESPs, rates and buffers, required TLVs, MICs, privacy, the Extended CMTS MIC's TLV 43,
    MTA delimiters; each finding one line with file, line (or byte offset), TLV path, rule and the
    specification section. Exit status 1 when anything is found."""
    return config_files.lint_files(files, as_json, docsis_version, mib_dirs)


@config.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@SECRET_FILE
@JSON("one list: per file, its kind (cm or mta), ok, the error if not ok, and lint's findings as warnings")
@LINT_STRICT
def verify(files, secret_file, as_json, strict):
    """Check the CM MIC, CMTS MIC and Extended CMTS MIC of binary FILES; of an MTA file, its delimiters and
    configuration hash. What else a CMTS refuses (`config lint`) is a warning, or with --strict a failure.

    Without --secret-file the CM MIC is checked (as a modem does) and the CMTS MIC is reported as not checked."""
    import json

    from hfcprov.config import ConfigError, verify_cm_mic
    from hfcprov.config import verify as verify_bytes
    from hfcprov.config.lint import lint_config
    from hfcprov.config.mta import is_mta, verify_mta

    secret = config_files.secret(secret_file)
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
                said = f"{f}: OK (MTA file, configuration hash {result['config_hash']})"
            elif secret is None:  # what a modem checks; the CMTS MIC needs the CMTS's secret
                verify_cm_mic(data)
                result.update(cm_mic="ok", cmts_mic="not checked")
                said = f"{f}: CM MIC OK; CMTS MIC not checked (no --secret-file)"
            else:
                verify_bytes(data, secret)
                result.update(cm_mic="ok", cmts_mic="ok")
                said = f"{f}: OK (CM MIC and CMTS MIC)"
            # a file whose MICs hold: what else a CMTS refuses in it is a warning (with --strict, a failure);
            # the MICs are the checks above
            findings = [x for x in lint_config(f) if x.rule != "mic"]
            if findings:
                result["warnings"] = [str(x) for x in findings]
                if not as_json:
                    for line in result["warnings"]:
                        click.echo(f"hfcprov: warning: {line}", err=True)
                if strict:
                    raise ConfigError(f"{findings[0].message} ({findings[0].rule}, --strict)", path=findings[0].path,
                                      offset=findings[0].offset)
            result["ok"] = True
            if not as_json:
                click.echo(said)
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
@JSON('{"a", "b", "same", "differences": [...]}')
def diff(a, b, as_json):
    """Semantic differences between two configs (any forms), by TLV path. Exit status 4 if they differ
    (1 is an error, as for every command)."""
    import json

    from hfcprov.config.diff import diff_trees

    lines = diff_trees(config_files.read(a), config_files.read(b))
    if as_json:
        click.echo(json.dumps({"a": a, "b": b, "same": not lines, "differences": lines}, indent=2))
    for line in [] if as_json else lines:
        click.echo(line)
    if lines:
        from hfcprov.cli import EXIT_DRIFT

        sys.exit(EXIT_DRIFT)  # found different: not 1, which says the comparison could not be made


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
