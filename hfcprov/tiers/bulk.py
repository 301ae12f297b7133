"""Bulk build: one binary config file per modem from tier templates and an inventory, plus a manifest.

Incremental: each file's inputs (template text and everything it includes, the
row's variables, a fingerprint of the shared secret, the hfcprov version) are
hashed into ``inputs`` in the manifest; a row whose inputs and output file are
unchanged is not rendered or rewritten. The secret itself is never stored: its
fingerprint is an HMAC-SHA256 keyed by the secret over a random salt the manifest
keeps (``secret_fingerprint``): testing a guessed secret against it costs one HMAC,
as testing it against the CMTS MIC (HMAC-MD5) of any file the folder holds and TFTP
serves does, so the manifest tells an attacker nothing the files do not; the salt,
drawn per output folder, keeps one secret's fingerprints apart across folders.

Rows are rendered once per distinct set of the values their template reads
(``templates.template_reads``: a modem's MAC is rarely one of them), and each rendered
text is encoded once per CMTS: an inventory of 100,000 modems over 20 tiers renders and
encodes 20 files' worth and writes 100,000.

A bad row is reported with its line and skipped; the other files are still
written (each atomically), and a file built by an earlier run stays in the
manifest when its row fails now. ``keep_going=False`` stops at the first bad row
instead (files already written stay, with their manifest). ``strict`` turns any bad
row into a raised BuildError after everything else is done; the CLI instead exits 3.
"""

from __future__ import annotations

import csv
import hashlib
import hmac
import io
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from hfcprov import __version__
from hfcprov.errors import HfcprovError
from hfcprov.fileio import atomic_write, atomic_write_in, ensure_folder, posix_path
from hfcprov.tiers.inventory import InventoryRow, check_row, read_inventory
from hfcprov.tiers.naming import DEFAULT_PATTERN, config_file_name
from hfcprov.tiers.secrets import SecretMap
from hfcprov.tiers.templates import (
    SHIPPED,
    SUFFIX,
    Renderers,
    TemplateError,
    locate,
    rendered_name,
    template_digest,
)

MANIFEST_JSON = "manifest.json"
MANIFEST_CSV = "manifest.csv"
MANIFEST_FIELDS = ("mac", "file", "sha256", "size", "tier")


class BuildError(HfcprovError):
    """A build that could not run, or (strict) had bad rows."""


@dataclass
class Entry:
    """One manifest line: the file built for one modem."""

    mac: str
    file: str
    sha256: str
    size: int
    tier: str
    inputs: str  # sha256 of everything that went into the file (never the secret itself)


@dataclass
class BuildSummary:
    """What a build did: files built, unchanged and failed, its warnings, and how long it took."""

    out: Path
    total: int = 0
    built: int = 0
    unchanged: int = 0
    failed: list[tuple[str, str]] = field(default_factory=list)  # (where, message)
    # what a modem or CMTS would refuse in a built file (config.lint) and odd fields: (where, message)
    warnings: list[tuple[str, str]] = field(default_factory=list)
    seconds: float = 0.0
    stopped: bool = False  # keep_going=False stopped at a bad row: rows after it were not built
    unsigned: int = 0  # files (built or unchanged) without a CMTS MIC: no secret for their CMTS

    @property
    def not_built(self) -> int:
        """Rows neither built, unchanged nor failed (a stop at the first bad row)."""
        return self.total - self.built - self.unchanged - len(self.failed)

    def as_dict(self) -> dict:
        return {"out": str(self.out), "total": self.total, "built": self.built, "unchanged": self.unchanged,
                "failed": [{"row": where, "error": message} for where, message in self.failed],
                "warnings": [{"row": where, "warning": message} for where, message in self.warnings],
                "not_built": self.not_built, "stopped": self.stopped, "unsigned": self.unsigned,
                "seconds": round(self.seconds, 3),
                "manifest": str(self.out / MANIFEST_JSON)}

    @property
    def files_per_second(self) -> float:
        return (self.built + self.unchanged) / self.seconds if self.seconds else 0.0


SALT_BYTES = 16


def secret_fingerprint(secret: bytes | None, salt: bytes) -> str:
    """Stands for the secret in the input hash: HMAC-SHA256 keyed by the secret over the folder's salt.

    What the manifest gives away (see the module's doc): a test of a guessed secret at the cost of one
    HMAC, which every file the folder holds already gives through its CMTS MIC; a secret is only as safe
    as it is long and random, manifest or not. A slow KDF here would slow guessing through the manifest
    alone (a key-stretched fingerprint cost 0.2 s per build and per CMTS, more than rendering 1,000 files),
    not through the files beside it."""
    if not secret:
        return "none"
    return hmac.new(secret, b"hfcprov build manifest\0" + salt, hashlib.sha256).hexdigest()


def input_hash(template_sha: str, variables: dict, secret_fp: str) -> str:
    # json.dumps(..., sort_keys=True, default=str) by one encoder, not one made per row
    text = _INPUTS_JSON.encode([__version__, template_sha, secret_fp, variables])
    return hashlib.sha256(text.encode()).hexdigest()


_INPUTS_JSON = json.JSONEncoder(sort_keys=True, default=str)


def read_manifest(out: Path) -> dict[str, Entry]:
    """Previous manifest by file name ({} when there is none or it is unreadable: then everything is rebuilt)."""
    return _read_manifest(out)[0]


def _read_manifest(out: Path) -> tuple[dict[str, Entry], bytes | None]:
    """(entries by file name, the folder's fingerprint salt); ({}, None) when there is none or it is unreadable."""
    try:
        data = json.loads((out / MANIFEST_JSON).read_text())
        entries = {e["file"]: Entry(**e) for e in data["entries"]}
        salt = data.get("salt")
        return entries, bytes.fromhex(salt) if isinstance(salt, str) and len(salt) == 2 * SALT_BYTES else None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}, None


def _entry_json(e: Entry) -> str:
    """``json.dumps(e.__dict__)``, formatted straight: a manifest has an entry per file."""
    q = _json_string
    try:
        if type(e.size) is int:
            return (f'{{"mac": {q(e.mac)}, "file": {q(e.file)}, "sha256": {q(e.sha256)}, "size": {e.size}, '
                    f'"tier": {q(e.tier)}, "inputs": {q(e.inputs)}}}')
    except TypeError:  # a field that is not a string: json says how it is written
        pass
    return json.dumps(e.__dict__)


_json_string = json.encoder.encode_basestring_ascii  # json.dumps' own quoting of a string (ensure_ascii)


def write_manifest(out: Path, entries: list[Entry], salt: bytes | None = None) -> None:
    """manifest.json (every entry, and the salt of the secrets' fingerprints) and manifest.csv, each atomically."""
    entries = sorted(entries, key=lambda e: e.file)
    head = {"hfcprov": __version__} if salt is None else {"hfcprov": __version__, "salt": salt.hex()}
    # an entry per line (indent= takes json's pure-Python encoder: ~15 ms per 1,000 rows), each as
    # json.dumps(entry.__dict__) writes it (tests/tiers/test_bulk.py holds the two equal)
    lines = ",\n".join(map(_entry_json, entries))
    atomic_write(out / MANIFEST_JSON, json.dumps(head)[:-1] + f', "entries": [\n{lines}\n]}}\n')
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(MANIFEST_FIELDS)
    for e in entries:
        w.writerow([e.mac, e.file, e.sha256, e.size, e.tier])
    atomic_write(out / MANIFEST_CSV, buf.getvalue())


# --- the work for one modem; runs in a worker process with --jobs -------------------------------------------------

MAX_BUILT = 4096  # files remembered per worker (each a few hundred bytes)
CHUNK = 64  # rows taken through each stage together (``_Worker.run_many``)


class _Worker:
    """What one process needs to build rows, and what it has built. Rows whose template reads the same
    values (``template_reads``; None when that cannot be told) render the same text, and one text signed
    by one CMTS's secret is one file: both are remembered, so such rows cost a lookup."""

    def __init__(self, secrets: SecretMap, out: str, lint_strict: bool = False):
        self.secrets, self.out, self.lint_strict = secrets, posix_path(out), lint_strict
        self.renderers = Renderers()  # this build's compiled templates
        self.render: dict[str, Callable[[dict], str]] = {}  # template path -> its renderer
        self.reads: dict[str, tuple | None] = {}  # template path -> the names it reads, sorted (None: unknown)
        self.built: dict[tuple, tuple[bytes, list]] = {}  # (cmts, values read | text) -> (file, problems)
        from hfcprov.config.lint import (  # with a worker: not at tiers.bulk import
            encode_checked_many,
            refusals,
        )

        self.encode_checked_many, self.refusals = encode_checked_many, refusals

    def run_many(self, tasks: list[_Task]):
        """Each row's ('built'|'unchanged'|'failed', entry, error message, warnings), in order. Rows go through
        the stages a chunk at a time (render every row, encode and lint the texts not met before, write), so
        each stage's code and remembered statements stay in the CPU's caches across the chunk: on the tiers
        set of bench/bulk.py that is ~0.03 ms less CPU a row than one row through every stage. A row's file is
        written when its result is taken: a caller that stops at a bad row writes nothing after it."""
        for start in range(0, len(tasks), CHUNK):
            chunk = tasks[start:start + CHUNK]
            for task, made in zip(chunk, self.files_of(chunk)):
                yield self.finish(task, made)

    def files_of(self, tasks: list[_Task]) -> list:
        """Each row's (file, problems) (what lint and the reading found, naming that row's rendered text),
        UNCHANGED for a row whose file is as the manifest says, or the HfcprovError that failed it."""
        made: list = [None] * len(tasks)
        new: dict[tuple, tuple] = {}  # (cmts, text) -> (the rows of this chunk that render it, name, secret)
        keys: list = [None] * len(tasks)  # each row's key by the values its template reads (None: unknown)
        for k, task in enumerate(tasks):
            prev = task.previous
            if prev is not None and prev.inputs == task.inputs and \
                    _same_file(os.path.join(self.out, task.file), prev):  # no pathlib per row
                made[k] = UNCHANGED
                continue
            template, variables = task.template, task.variables
            try:
                if template not in self.render:
                    self.render[template] = self.renderers(template)
                    self.reads[template] = self.renderers.reads(template)
                names = self.reads[template]
                keys[k] = by_values = None if names is None else \
                    (task.cmts, template, _values_key(variables, names))
                found = self.built.get(by_values) if by_values is not None else None
                if found is None:
                    by_text = (task.cmts, self.render[template](variables))
                    found = self.built.get(by_text)
                    if found is None:
                        if by_text not in new:
                            new[by_text] = ([], rendered_name(template, variables),
                                            self.secrets.secret_for(variables))
                        new[by_text][0].append(k)
                        continue
                    self._remember(found, by_values)
                made[k] = found
            except HfcprovError as err:
                made[k] = err
        if new:
            # what a modem or CMTS would refuse (config.lint): a warning, or with lint_strict the row fails
            jobs = [(text, name, secret) for (_, text), (_, name, secret) in new.items()]
            for (by_text, (ks, _, _)), found in zip(new.items(), self.encode_checked_many(jobs, plant=True)):
                if isinstance(found, HfcprovError) or found[1]:
                    # its error or findings name the first row's text: each other row gets its own
                    made[ks[0]] = found
                    for k in ks[1:]:
                        made[k] = self._alone(tasks[k], by_text[1])
                    continue
                self._remember(found, by_text)
                for k in ks:
                    self._remember(found, keys[k])
                    made[k] = found
        return made

    def _alone(self, task: _Task, text: str):
        """One row's text encoded on its own, its error or findings naming it."""
        name, secret = rendered_name(task.template, task.variables), self.secrets.secret_for(task.variables)
        return self.encode_checked_many([(text, name, secret)], plant=True)[0]

    def _remember(self, found: tuple[bytes, list], key: tuple | None) -> None:
        if key is not None:
            if len(self.built) >= MAX_BUILT:
                self.built.clear()
            self.built[key] = found

    def finish(self, task: _Task, made) -> tuple[str, Entry | None, str | None, list[str]]:
        """The row's result from what ``files_of`` made of it; its file written when built anew."""
        prev = task.previous
        if made is UNCHANGED:
            return "unchanged", prev, None, []
        if isinstance(made, HfcprovError):
            return "failed", None, f"{task.where}: {made}", []
        data, problems = made
        refused = self.refusals(problems) if problems and self.lint_strict else []
        if refused:  # a warning (a burst that caps the rate) stays a warning under --strict
            return "failed", None, f"{task.where}: {refused[0]} (--strict)", []
        tier = str(task.variables["tier"] if "tier" in task.variables else
                   os.path.basename(task.template).removesuffix(SUFFIX))
        digest = hashlib.sha256(data).hexdigest()
        target = os.path.join(self.out, task.file) if prev is not None else None
        if not (prev is not None and prev.sha256 == digest and _same_file(target, prev)):
            # no fsync per file (~5 ms each): build() syncs once before the manifest names the files
            atomic_write_in(self.out, task.file, data, durable=False)
        return "built", Entry(task.variables["mac"], task.file, digest, len(data), tier, task.inputs), None, \
            [f"{task.where}: {p}" for p in problems]


UNCHANGED = object()  # files_of's mark of a row whose file is as its manifest entry says


_PLAIN = frozenset({str, type(None)})


def _values_key(variables: dict, names: tuple) -> tuple:
    """The values of ``names`` in ``variables`` (None: not given) as a key: themselves when all are strings
    (an inventory's cells), else their reprs (a list from YAML is unhashable; True is not 1)."""
    values = tuple(map(variables.get, names))
    if _PLAIN.issuperset(map(type, values)):
        return values
    return ("repr", *map(repr, values))


_WORKER: list[_Worker] = []  # the worker process's own (a pool's initializer sets it)


def _init_worker(secrets: SecretMap, out: str, lint_strict: bool = False) -> None:
    _WORKER[:] = [_Worker(secrets, out, lint_strict)]


def _run_chunk(tasks: list[_Task]) -> list:
    return list(_WORKER[0].run_many(tasks))


@dataclass
class _Task:
    """One row's work for a worker: its values, template, file name and input hash."""

    where: str
    variables: dict
    template: str
    file: str
    inputs: str
    previous: Entry | None
    cmts: str | None = None  # whose secret signs the file (None: the default secret)


def _same_file(path: str | Path, entry: Entry) -> bool:
    try:
        if os.stat(path).st_size != entry.size:
            return False
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest() == entry.sha256
    except OSError:
        return False


# --- planning and running ----------------------------------------------------------------------------------------


def build(
    inventory: str | Path,
    out: str | Path,
    template: str | Path | None = None,
    secret: bytes | None = None,
    jobs: int | None = 1,
    pattern: str = DEFAULT_PATTERN,
    strict: bool = False,
    progress: Callable[[int, int], None] | None = None,
    keep_going: bool = True,
    secrets: SecretMap | None = None,
    lint_strict: bool = False,
) -> BuildSummary:
    """Build every row of ``inventory`` into ``out``.

    ``template``: one template file for every row, or a folder of ``<tier>.j2`` files chosen by each
    row's ``tier`` (added to the shipped ``templates/``, the default). ``jobs``: worker processes (None: one
    per CPU; 1: this process). ``secret``: the CMTS shared secret
    of every file; ``secrets``: one per CMTS (``tiers.secrets.SecretMap``, the inventory names each row's
    CMTS), with ``secret`` (or its own default) for rows that name none. ``summary.unsigned`` counts files
    without a CMTS MIC. What a modem or CMTS would refuse in a file (``config.lint``) is in
    ``summary.warnings``; ``lint_strict``: such a row fails instead.

    Durability: files are written to temporary names and renamed, without a flush each; one ``os.sync``
    before the manifest is written puts them on disk, so a manifest never names a file that is not.
    """
    if jobs is None:
        jobs = default_jobs()
    if secrets is None:
        secrets = SecretMap({}, secret)
    elif secret is not None and secrets.default is None:
        secrets = secrets.with_default(secret)
    started = time.perf_counter()
    table = read_inventory(inventory)  # a bad inventory leaves no output folder behind
    if not _one_template(template):
        table.require("tier", why="to choose each row's template (or give one template for every row)")
    rows = table.rows
    out = ensure_folder(out)
    summary = BuildSummary(out=out, total=len(rows))
    previous, salt = _read_manifest(out)
    if salt is None:  # a new folder (or a manifest from before salts): every input hash is new anyway
        salt = os.urandom(SALT_BYTES)
    fingerprints: dict = {}  # CMTS -> the fingerprint of its secret, computed once
    tasks, claimed = [], {}
    digests: dict[str, str] = {}  # template path -> template_digest
    chosen: dict = {}  # tier -> template path
    for row in rows:
        try:
            tasks.append(_plan(row, template, pattern, previous, secrets, fingerprints, digests, chosen, claimed,
                               salt))
        except HfcprovError as err:
            summary.failed.append((row.where, str(err) if str(err).startswith(row.where) else f"{row.where}: {err}"))

    entries: dict[str, Entry] = {}
    done = len(summary.failed)
    if summary.failed and not keep_going:
        tasks, summary.stopped = [], True
    if progress:
        progress(done, summary.total)
    try:
        unsigned = {task.file for task in tasks if fingerprints[task.cmts] == "none"}
        for status, entry, error, warnings in _execute(tasks, secrets, out, jobs, lint_strict):
            done += 1
            summary.warnings += [(w.split(": ", 1)[0], w) for w in warnings]
            if status == "failed":
                summary.failed.append((error.split(": ", 1)[0], error))
                if not keep_going:
                    summary.stopped = True
                    break
            else:
                entries[entry.file] = entry
                summary.unsigned += entry.file in unsigned
                summary.built += status == "built"
                summary.unchanged += status == "unchanged"
            if progress:
                progress(done, summary.total)
    finally:
        # Also on Ctrl-C: a row that failed (or was not reached) keeps the entry of the file an earlier run
        # built for it, so nothing already built is lost; a file changed since is caught by its sha256 next run.
        for task in tasks:
            if task.file not in entries and task.previous is not None and (out / task.file).exists():
                entries[task.file] = task.previous
        if summary.built:
            os.sync()  # the files reach the disk before a manifest that vouches for them
        write_manifest(out, list(entries.values()), salt)
    order = {row.where: i for i, row in enumerate(rows)}
    summary.failed.sort(key=lambda f: order.get(f[0], len(order)))  # report in inventory order
    summary.seconds = time.perf_counter() - started
    if strict and summary.failed:
        first = summary.failed[0][1]
        more = f" (and {len(summary.failed) - 1} more bad rows)" if len(summary.failed) > 1 else ""
        raise BuildError(f"{first}{more}; the other {summary.built + summary.unchanged} files were written")
    return summary


def _plan(row: InventoryRow, template, pattern, previous, secrets, fingerprints, digests, chosen, claimed,
          salt: bytes) -> _Task:
    variables = check_row(row)
    cmts = secrets.cmts_of(variables)
    if cmts not in fingerprints:
        fingerprints[cmts] = secret_fingerprint(secrets.secret_for(variables), salt)
    tier = variables.get("tier")
    path = chosen.get(tier)  # same tier, same file: looked up once per build
    if path is None:
        path = chosen[tier] = template_for(variables, template)
    key = str(path)
    if key not in digests:
        digests[key] = template_digest(path)
    name = config_file_name(pattern, variables, flat=True)  # the name TFTP serves and DHCP hands out
    if name in (MANIFEST_JSON, MANIFEST_CSV):
        raise BuildError(f"file name {name!r} from pattern {pattern!r} is not a plain file name in the output folder")
    if name in claimed:
        raise BuildError(f"{name} is already built from {claimed[name]} (duplicate mac?)")
    claimed[name] = row.where
    return _Task(row.where, variables, key, name, input_hash(digests[key], variables, fingerprints[cmts]),
                 previous.get(name), cmts)


def _one_template(template) -> bool:
    """Whether ``template`` names one template for every row (a file or a shipped tier), not a folder."""
    return template is not None and not Path(template).is_dir()


def template_for(row: dict, template: str | Path | None = None) -> Path:
    """The template file for one inventory row (its checked variables): ``template`` itself when it is a file
    or a shipped tier name, else ``<tier>.j2`` from the folder ``template`` or, when it has none, from the
    shipped ``templates/`` (a site folder adds tiers to the shipped ones and may replace one; default: shipped).

    The one tier -> template rule of the bulk build and of the TFTP server's dynamic files."""
    if template is not None and Path(template).is_file():
        return locate(template)
    if _one_template(template):
        return locate(template)  # a shipped tier name, or a one-line "no template" error
    tier = row.get("tier")
    if not tier:
        raise BuildError("no tier, and no single --template was given")
    folders = [Path(template), SHIPPED] if template is not None else [SHIPPED]
    if not str(tier).startswith("_"):
        for folder in folders:
            path = folder / f"{tier}{SUFFIX}"
            if path.is_file():
                return path.resolve()
    tiers = ", ".join(sorted({p.stem for folder in folders for p in folder.glob("*" + SUFFIX)
                              if not p.name.startswith("_")}))
    where = " or ".join(str(f) for f in folders)
    from hfcprov.suggest import did_you_mean

    raise TemplateError(f"no template for tier {tier!r} in {where} (tiers: {tiers}){did_you_mean(str(tier), tiers.split(', '))}")


_template_for = template_for  # the name the TFTP server's dynamic files first imported


def _execute(tasks: list[_Task], secrets: SecretMap, out: Path, jobs: int, lint_strict: bool = False):
    if jobs <= 1 or len(tasks) < 2:
        yield from _Worker(secrets, str(out), lint_strict).run_many(tasks)
        return
    import multiprocessing  # only for a parallel build: ~15 ms of a one-process build's start

    ctx = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn")
    size = max(1, min(256, len(tasks) // (jobs * 8)))
    chunks = [tasks[i:i + size] for i in range(0, len(tasks), size)]
    pool = ctx.Pool(jobs, initializer=_init_worker, initargs=(secrets, str(out), lint_strict))
    try:
        for results in pool.imap_unordered(_run_chunk, chunks):
            yield from results
        # Every chunk is back: the workers are told to exit and do. Killing them instead (the
        # context manager's terminate) can kill one holding the task queue's lock, and the join
        # then waits forever for another blocked on that lock: a finished build that never returned.
        pool.close()
    except BaseException:
        pool.terminate()  # an error, or the caller stopped reading: nothing more is wanted from them
        raise
    finally:
        pool.join()


def default_jobs() -> int:
    """One worker process per CPU this process may run on: ``--jobs``'s default."""
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))
