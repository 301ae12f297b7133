"""What ``hfcprov build`` does, without click.

The click command in ``build_cmd`` declares the options; a plain invocation is parsed by the shortcut
(hfcprov.cli.shortcut) from the table generated from it and calls ``build_files`` with the same
arguments: a 1,000-modem build does not pay for importing click.
"""

from __future__ import annotations

import json
import os

from hfcprov.cli import EXIT_FAILED, echo, verbosity
from hfcprov.errors import OptionError


def build_files(template, inventory, out, mkdir, secret_file, secret_map, cmts_column, no_cmts_mic, jobs, pattern,
                keep_going, strict, progress, as_json):
    """Build every row of ``inventory`` into ``out`` (``tiers.bulk.build``), print each warning and bad row, one
    warning for files without a CMTS MIC, and the summary; the exit status is 3 when a row failed."""
    import gc

    # The garbage collector ran ~40 times over a 1,000-row build, its older generations scanning every
    # object of the imports (~3 ms of ~150): while it builds, those are frozen out of its scans and it runs
    # after 20,000 allocations, not 700 (a build makes few reference cycles); restored after.
    threshold = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(20_000, *threshold[1:])
    try:
        return _build_files(template, inventory, out, mkdir, secret_file, secret_map, cmts_column, no_cmts_mic,
                            jobs, pattern, keep_going, strict, progress, as_json)
    finally:
        gc.set_threshold(*threshold)
        gc.unfreeze()


def _build_files(template, inventory, out, mkdir, secret_file, secret_map, cmts_column, no_cmts_mic, jobs, pattern,
                 keep_going, strict, progress, as_json):
    from hfcprov.cli.progress import ProgressReport
    from hfcprov.cli.config_files import secret as read_secret  # as `config encode --secret-file` reads it
    from hfcprov.fileio import output_folder, posix_path
    from hfcprov.tiers.bulk import build as run_build
    from hfcprov.tiers.secrets import SecretMap

    if no_cmts_mic and (secret_file or secret_map):
        raise OptionError("--no-cmts-mic contradicts --secret-file/--secret-map: give one")
    output_folder(os.path.join(out, "manifest.json"), mkdir, creates=1)  # build makes OUT, not a typo's tree
    secret = read_secret(secret_file) if secret_file else None
    secrets = SecretMap.load(secret_map, secret, cmts_column)  # never printed: errors name the CMTS
    if progress is False or verbosity() < 0:
        mode = "off"
    else:
        mode = "bar" if progress else None  # None: a bar on a terminal, periodic lines otherwise
    report = ProgressReport("rows", mode=mode)
    try:
        summary = run_build(inventory, out, template, secret, jobs, pattern, keep_going=keep_going,
                            progress=None if mode == "off" else lambda done, total: report.update(done, total),
                            secrets=secrets, lint_strict=strict)
    finally:
        report.close()
    for _, message in summary.warnings:
        echo(f"hfcprov: warning: {message}", err=True)
    for _, message in summary.failed:
        echo(f"hfcprov: bad row: {message}", err=True)
    if summary.unsigned and not no_cmts_mic:  # once, however many files
        how = ("--secret-file or --secret-map" if not secret_map else
               f"--secret-file for the rows that name no CMTS in --cmts-column {cmts_column!r}")
        echo(f"hfcprov: warning: {summary.unsigned} of {summary.built + summary.unchanged} files carry no CMTS "
             f"MIC (TLV 7): a CMTS refuses such a modem's registration; give {how}, or --no-cmts-mic "
             f"if that is intended", err=True)
    if as_json:
        echo(json.dumps(summary.as_dict(), indent=2))
    else:
        stopped = f", {summary.not_built} not built (--fail-fast)" if summary.stopped else ""
        echo(f"{summary.built} built, {summary.unchanged} unchanged, {len(summary.failed)} failed of {summary.total}"
             f"{stopped} in {summary.seconds:.2f} s{files_per_second(summary)}; manifest: "
             f"{os.path.join(posix_path(out), 'manifest.json')}")
    return EXIT_FAILED if summary.failed else 0


def files_per_second(summary) -> str:
    """" (1234 files/s)" with the digits the rate needs (never "0 files/s"), or nothing when no file was made."""
    done, seconds = summary.built + summary.unchanged, summary.seconds
    if not done or seconds <= 0:
        return ""
    rate = done / seconds
    return f" ({rate:.0f} files/s)" if rate >= 10 else f" ({rate:.2g} files/s)"
