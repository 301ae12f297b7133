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


def output_folder(out, sources, mkdir) -> None:
    """-o's folder must exist unless --mkdir (``hfcprov.fileio.output_folder``); with several inputs -o is
    itself the folder, made by the command when the folder holding it exists."""
    from hfcprov.fileio import output_folder as check

    if out is not None:
        several = len(sources) > 1 or os.path.isdir(out)
        check(os.path.join(out, "x") if several else out, mkdir, creates=1 if several else 0)


def outputs(sources: tuple[str, ...], out: str | None, suffix: str) -> list:
    """One output path per source: OUT itself for one source, OUT/<stem><suffix> for several."""
    if out is None:
        return [None] * len(sources)
    if len(sources) == 1 and not os.path.isdir(out or "."):  # "": pathlib's "."
        return [out]
    if os.path.exists(out) and not os.path.isdir(out):
        raise HfcprovError(f"{out}: with several inputs, -o must be a directory")
    # os.path, not pathlib: a bulk encode names thousands of files (Path(s).stem: the name without its suffix)
    names = [os.path.join(out, _stem(s) + suffix) for s in sources]
    if len(set(names)) != len(names):
        raise HfcprovError(f"two inputs would both be written to the same file in {out}")
    return names


def _stem(path: str) -> str:
    """``pathlib.Path(path).stem``: the name without its last suffix (a dot neither first nor last)."""
    name = os.path.basename(os.fspath(path).rstrip("/"))
    i = name.rfind(".")
    return name[:i] if 0 < i < len(name) - 1 else name


NO_CMTS_MIC = ("no CMTS shared secret (--secret-file): the file{s} carr{y} no CMTS MIC (TLV 7), and a CMTS "
               "refuses such a modem's registration; --no-cmts-mic says that is intended")


def encode_files(sources, out, mkdir, secret_file, no_cmts_mic, mta, mta_hash, dialplan, no_extended_mic,
                 docsis_version, mib_dirs, strict):
    """Encode each of ``sources`` to ``out`` (a file, or a folder for several); nothing is written unless
    every source encodes. What a modem or CMTS may refuse (``config.lint``, and the reading's warnings) is
    a warning per line on stderr, or with ``strict`` an error (nothing written, exit 1). CM files without
    a secret get one warning (unless ``no_cmts_mic``).

    Several sources are written without a flush each, then synced once (``os.sync``) before the command
    returns: every file is on disk when it exits 0. One source is written with its own fsync."""
    from hfcprov.config import ConfigError
    from hfcprov.config.framing import is_mta, scan
    from hfcprov.errors import OptionError
    from hfcprov.fileio import atomic_write

    if mta_hash or dialplan:
        mta = True
    if mta and secret_file:
        raise OptionError("an MTA file has no CMTS MIC: --secret-file is for CM files")
    if no_cmts_mic and secret_file:
        raise OptionError("--no-cmts-mic and --secret-file contradict each other: give one")
    output_folder(out, sources, mkdir)
    load_mibs(mib_dirs)

    key = secret(secret_file)
    plan = _read_dialplan(dialplan) if dialplan else None
    targets = outputs(sources, out, ".cm")
    # Encode everything first: one bad input leaves no output at all.
    blobs, unsigned = [], 0
    for src, done in zip(sources, _encoded(sources, key, mta, mta_hash, plan, docsis_version, no_extended_mic)):
        if isinstance(done, ConfigError):
            raise done.at(source=str(src))
        if isinstance(done, HfcprovError):
            raise done
        blob, problems = done
        report_problems(problems, strict)
        blobs.append(blob)
        # no CMTS MIC: a CM file (not an MTA one, whichever way it was chosen) with neither a secret nor a
        # decoded MIC kept from a binary source
        unsigned += key is None and not is_mta(blob) and scan(blob)[2] is None
    if unsigned and not no_cmts_mic:
        echo("hfcprov: warning: " + NO_CMTS_MIC.format(s="s" if unsigned > 1 else "", y="y" if unsigned > 1 else "ies"),
             err=True)
    several = len(sources) > 1
    for target, blob in zip(targets, blobs):
        atomic_write(target, blob, durable=not several)
    if several:
        os.sync()  # one flush for all the files (a flush per file costs ~5 ms each)
        echo(f"wrote {len(blobs)} files to {out}")


ENCODE_CHUNK = 64  # CM sources read, linted and assembled a stage at a time (config.lint.encode_checked_many)


def _encoded(sources, key, mta, mta_hash, plan, version, no_extended_mic):
    """Each source's (file, problems) or the HfcprovError it raised, in order. CM sources go a chunk at a
    time through ``encode_checked_many`` (~20% less CPU a file than one by one); MTA files one by one."""
    from hfcprov.config.lint import encode_checked, encode_checked_many

    if mta or mta_hash or plan is not None:
        for src in sources:
            try:
                yield encode_checked(_read_bytes(src), str(src), key, mta=mta, mta_hash=mta_hash, dialplan=plan,
                                     version=version, extended_mic=not no_extended_mic)
            except HfcprovError as err:
                yield err
        return
    for start in range(0, len(sources), ENCODE_CHUNK):
        jobs = []
        for src in sources[start:start + ENCODE_CHUNK]:
            try:
                jobs.append((_read_bytes(src), str(src), key))
            except HfcprovError as err:  # this source is the first to fail: nothing after it is read
                yield from encode_checked_many(jobs, version=version, extended_mic=not no_extended_mic)
                yield err
                return
        yield from encode_checked_many(jobs, version=version, extended_mic=not no_extended_mic)


def _read_bytes(path) -> bytes:
    """A file's bytes with four system calls (open, read, read, close): a bulk encode reads thousands."""
    from hfcprov.config import ConfigError

    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        try:
            chunks = []
            while True:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    return b"".join(chunks)
                chunks.append(chunk)
        finally:
            os.close(fd)
    except OSError as err:
        raise ConfigError(f"cannot read: {err.strerror}", source=str(path)) from None


def report_problems(problems, strict: bool) -> None:
    """Each problem (a lint finding or a reading warning) as a warning line on stderr; with ``strict`` the
    first refusal (``config.lint.refusals``: not a warning-severity finding) is an error instead (after the
    others are shown), and nothing is written."""
    if not problems:
        return
    from hfcprov.config.lint import refusals

    refused = refusals(problems) if strict else []
    if refused:
        for problem in problems:
            if problem is not refused[0]:
                echo(f"hfcprov: warning: {problem}", err=True)
        raise HfcprovError(f"{refused[0]} (--strict)")
    for problem in problems:
        echo(f"hfcprov: warning: {problem}", err=True)


def _read_dialplan(path) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as err:
        raise HfcprovError(f"{path}: cannot read the dial plan: {err.strerror}") from None


def lint_files(files, as_json, docsis_version, mib_dirs, profile=None) -> int:
    """Lint each of ``files`` (any form; a binary one with its MICs): one line per finding, or one JSON list
    of findings (a file that cannot be read is one with rule "error"). Exit status 1 when anything but a
    warning-severity finding was found. ``profile``: the modem profile the burst rule checks against."""
    from hfcprov.config import ConfigError
    from hfcprov.config.lint import lint_config, refusals

    load_mibs(mib_dirs)
    if profile is not None:
        from hfcprov.queue.profile import parse_profile

        parse_profile(profile)  # a bad name is one error line before any file
    found, failed = [], False
    for f in files:
        try:
            got = lint_config(f, version=docsis_version, profile=profile)
            failed = failed or bool(refusals(got))
            findings = [x.as_dict() if as_json else str(x) for x in got]
        except ConfigError as err:
            err.at(source=str(f))
            failed = True
            findings = [{"rule": "error", "file": str(f), "line": err.line, "offset": err.offset, "path": err.path,
                         "message": err.message, "section": "", "severity": "error"} if as_json else f"{err} [error]"]
        found += findings
    if as_json:
        import json

        echo(json.dumps(found, indent=2))
    else:
        for line in found:
            echo(line)
    return 1 if failed else 0


def decode_files(files, fmt, secret_file, out, mkdir, names, c_tool, mib_dirs, strict):
    """Render each of ``files`` as ``fmt`` to stdout, or to ``out`` (a file, or a folder for several)."""
    from hfcprov.config import render_json, render_text, render_yaml

    output_folder(out, files, mkdir)
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
