"""What ``hfcprov config encode`` and ``config decode`` do, without click.

The click commands in ``config_cmd`` declare the options and call these functions with them; a plain
per-file invocation calls them straight from the shortcut parser (hfcprov.cli.shortcut), which
spares a per-modem encode the import of click (and of pathlib: the one-file case uses os.path).
"""

from __future__ import annotations

import os

from hfcprov.cli import echo
from hfcprov.errors import HfcprovError

FORMATS = ("text", "yaml", "json")
SUFFIX = {"text": ".cfg", "yaml": ".yaml", "json": ".json"}


def secret(path):
    """The CMTS shared secret of ``--secret-file``; a file others can read or change is warned about."""
    if not path:
        return None
    from hfcprov import secretfile
    from hfcprov.config import read_secret

    found = secretfile.problem(path, "CMTS shared secret file")
    if found:
        echo(f"hfcprov: warning: {found[1]}", err=True)
    return read_secret(path)


def read(path, secret=None, strict=False):
    """The config at ``path``; a lenient decode's warnings go to stderr, one line each."""
    from hfcprov.config import read_config

    tree = read_config(path, secret, strict=strict)
    for warning in tree.warnings:
        echo(f"hfcprov: warning: {warning}", err=True)
    return tree


def load_mibs(dirs) -> None:
    """--mib-dir folders (config and snmp commands) compiled with pysmi together with mibs/
    (``hfcprov.mib.load_mib_dirs``, cached by digest); their names join hfcprov.mib's index. A
    module pysmi cannot compile is one warning line naming its file and the reason."""
    if not dirs:
        return
    from hfcprov import mib

    mib.load_mib_dirs(dirs, warn=lambda line: echo(f"hfcprov: warning: {line}", err=True))


def outputs(sources: tuple[str, ...], out: str | None, suffix: str) -> list:
    """One output path per source: OUT itself for one source, OUT/<stem><suffix> for several."""
    if out is None:
        return [None] * len(sources)
    if len(sources) == 1 and not os.path.isdir(out or "."):  # "": pathlib's "."
        return [out]
    from pathlib import Path

    if Path(out).exists() and not Path(out).is_dir():
        raise HfcprovError(f"{out}: with several inputs, -o must be a directory")
    names = [Path(out) / (Path(s).stem + suffix) for s in sources]
    if len(set(names)) != len(names):
        raise HfcprovError(f"two inputs would both be written to the same file in {out}")
    return names


NO_CMTS_MIC = ("no CMTS shared secret (--secret-file): the file{s} carr{y} no CMTS MIC (TLV 7), and a CMTS "
               "refuses such a modem's registration; --no-cmts-mic says that is intended")


def encode_files(sources, out, secret_file, no_cmts_mic, mta, mta_hash, mib_dirs, strict):
    """Encode each of ``sources`` to ``out`` (a file, or a folder for several); nothing is written
    unless every source encodes. CM files without a secret get one warning (unless ``no_cmts_mic``)."""
    from hfcprov.config import ConfigError
    from hfcprov.config import encode as encode_tree
    from hfcprov.config.codec import is_mta
    from hfcprov.config.mta import encode_mta
    from hfcprov.fileio import atomic_write

    load_mibs(mib_dirs)
    if mta_hash:
        mta = True
    if mta and secret_file:
        raise HfcprovError("an MTA file has no CMTS MIC: --secret-file is for CM files")
    if no_cmts_mic and secret_file:
        raise HfcprovError("--no-cmts-mic and --secret-file contradict each other: give one")

    key = secret(secret_file)
    targets = outputs(sources, out, ".cm")
    # Encode everything first: one bad input leaves no output at all.
    blobs, unsigned = [], 0
    for src in sources:
        try:
            tree = read(src, strict=strict)
            blobs.append(encode_mta(tree, mta_hash) if mta else encode_tree(tree, key))
        except ConfigError as err:
            raise err.at(source=str(src))
        # no CMTS MIC: a CM file (not an MTA one, whichever way it was chosen) with neither a secret nor a
        # decoded MIC kept from a binary source
        unsigned += key is None and tree.cmts_mic is None and not is_mta(blobs[-1])
    if unsigned and not no_cmts_mic:
        echo("hfcprov: warning: " + NO_CMTS_MIC.format(s="s" if unsigned > 1 else "", y="y" if unsigned > 1 else "ies"),
             err=True)
    for target, blob in zip(targets, blobs):
        atomic_write(target, blob)
    if len(sources) > 1:
        echo(f"wrote {len(blobs)} files to {out}")


def decode_files(files, fmt, secret_file, out, names, c_tool, mib_dirs, strict):
    """Render each of ``files`` as ``fmt`` to stdout, or to ``out`` (a file, or a folder for several)."""
    from hfcprov.config import render_json, render_text, render_yaml

    load_mibs(mib_dirs)
    from hfcprov.fileio import atomic_write

    render = {"text": lambda t: render_text(t, names=names, c_tool=c_tool), "yaml": render_yaml,
              "json": render_json}[fmt]
    key = secret(secret_file)
    targets = outputs(files, out, SUFFIX[fmt])
    texts = [render(read(f, key, strict)) for f in files]
    for f, target, text in zip(files, targets, texts):
        if target is None:
            if len(files) > 1:
                echo(f"# {f}")
            echo(text, nl=False)
        else:
            atomic_write(target, text)
