"""Fuzz the config codec with mutated real-shaped files: only the codec's own errors, every file that
decodes has text, YAML and JSON forms that parse back to the same tree, and each form encodes back to the
bytes the decoded file itself encodes to (the round trip a user relies on: decode, edit, encode).

    .venv/bin/python bench/fuzz_config.py [--inputs 1000000] [--seconds N] [--seed 1] [--jobs 1] [--forms-every 1]

Seeds: the bench's realistic DOCSIS 3.0 config (bench/codec.py) with and without a CMTS MIC, files in
unusual layouts (MICs first, TLV 7 before 6, pad bytes, two CM MICs), another vendor's TLV 43 inside
flows and classifiers, CVCs over 255 bytes (32, 81), lenient fields (a 1-byte field as 2 bytes, a
service class name without its NUL), and PacketCable MTA files with TLV 64 and the configuration hash.
Each input is a seed with 1-8 mutations (byte set, flip, insert, delete, length byte +/-1, truncate,
splice two seeds). Per input: decode (CM or MTA by content) must succeed or raise ConfigError; a decoded
tree must encode again or raise ConfigError, and its text (both dialects), YAML and JSON forms must
parse back equal. Anything else is a finding. Then each of the text, YAML and JSON forms is encoded
(CM files with the seeds' secret, so both CMTS MICs are computed) and compared with the decoded tree
encoded the same way: an input whose form does not encode to the same bytes (or is refused where the
tree is not) is a round-trip miss ("not exact" column; target 0). The first few of each are written
to --failures. "byte-exact" counts inputs whose decoded tree encodes to the input itself (a mutated
file's MICs are usually wrong, so most cannot).
The table's "inputs/s" is per process; 6 helpers share 2 cores today, so it is noisy: compare runs
on the same machine in the same hour only.
"""

from __future__ import annotations

import argparse
import hashlib
import multiprocessing
import random
import sys
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hfcprov.config import ConfigError, ConfigTree, Tlv, encode, parse_text  # noqa: E402
from hfcprov.config.forms import parse_any, parse_json, parse_yaml, render_json, render_yaml  # noqa: E402
from hfcprov.config.mta import encode_mta  # noqa: E402
from hfcprov.config.text import render_text  # noqa: E402
from hfcprov.config.tree import Layout  # noqa: E402

SECRET = b"fuzz-secret"


def seeds() -> list[bytes]:
    from bench.codec import realistic_text

    tree = parse_text(realistic_text(3))
    out = [encode(tree), encode(tree, SECRET)]
    small = parse_text("Main { NetworkAccess 1; MaxCPE 4; UsServiceFlow { UsServiceFlowRef 1; QosParamSetType 7;"
                       ' ServiceClassName "gold"; } SnmpMibObject 1.3.6.1.2.1.69.1.3.8.0 Integer 1; }')
    for marks in ([(0, 6), (0, 7)], [(1, 7), (4, 6)], [(1, 0), (2, 6), (2, 6)], [(3, 6), (3, 0)]):
        t = ConfigTree(list(small.tlvs), layout=Layout(marks=marks, end_marker=bool(len(marks) % 2)))
        t.cmts_mic = b"\x11" * 16  # kept as decoded: TLV 7 before TLV 6 is a valid layout then
        out.append(encode(t))
    vendor = bytes.fromhex("2b08" "080300407b" "040105")
    content = bytes.fromhex("030101") + bytes([24, len(vendor) + 4]) + bytes.fromhex("01020001") + vendor + \
        bytes([22, len(vendor)]) + vendor + vendor
    out.append(_signed(content))
    out.append(encode(ConfigTree([Tlv(3, 1), Tlv(32, bytes(range(256)) * 3), Tlv(81, b"c" * 600)])))
    odd = bytes.fromhex("030101" "12020004" "1807" "0405676f6c6421")  # MaxCPE in 2 bytes; a name without NUL
    out.append(_signed(odd))
    mta = parse_text("Main { MtaConfigDelimiter 1; SnmpMibObject 1.3.6.1.4.1.4491.2.2.1.1.1.1.0 Integer 1;"
                     ' SnmpMibObject 1.3.6.1.4.1.4491.2.2.1.1.1.3.0 String "%s"; MtaConfigDelimiter 255; }' % ("x" * 280))
    out += [encode_mta(mta), encode_mta(mta, hash="na")]
    return out


def _signed(content: bytes) -> bytes:
    data = content + b"\x06\x10" + hashlib.md5(content).digest() + b"\xff"
    return data + b"\0" * (-len(data) % 4)


def mutate(rng: random.Random, data: bytes, pool: list[bytes]) -> bytes:
    b = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        if not b:
            b = bytearray(rng.choice(pool))
        op = rng.randrange(7)
        i = rng.randrange(len(b))
        if op == 0:
            b[i] = rng.randrange(256)
        elif op == 1:
            b[i] ^= 1 << rng.randrange(8)
        elif op == 2:
            b[i:i] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 4)))
        elif op == 3:
            del b[i:i + rng.randint(1, 4)]
        elif op == 4:  # a length byte one off: the framing's edge cases
            b[i] = (b[i] + rng.choice((-1, 1))) % 256
        elif op == 5:
            del b[i:]
        else:
            other = rng.choice(pool)
            j = rng.randrange(len(other))
            b = b[:i] + bytearray(other[j:j + rng.randint(1, 64)]) + b[i:]
    return bytes(b)


def _encoded(tree) -> bytes | str:
    """The file ``tree`` encodes to (CM files with the seeds' secret), or the codec's refusal."""
    try:
        return encode(tree, None if tree.mta or not tree.cm_file and tree.tlvs and tree.tlvs[0].code == 254
                      else SECRET)
    except ConfigError as err:
        return f"refused: {err.message}"


def check(blob: bytes, plain_forms: bool = True) -> tuple[str, list[str]]:
    """('error' (the codec's own) | 'exact' / 'decoded' (re-encoded to the same / other bytes), [the forms
    that did not encode back to what the tree encodes to]); raises AssertionError / anything else for a
    finding."""
    try:
        tree = parse_any(blob, "fuzz")
    except ConfigError:
        return "error", []
    try:
        again = encode(tree)
    except ConfigError:
        again = None
    text = render_text(tree)
    assert parse_text(text) == tree, "text form does not parse back equal"
    assert parse_text(render_text(tree, c_tool=True)) == tree, "C-tool text form does not parse back equal"
    forms = [("text", text, parse_text)]
    if plain_forms:
        yaml_text, json_text = render_yaml(tree), render_json(tree)
        assert parse_yaml(yaml_text) == tree, "YAML form does not parse back equal"
        assert parse_json(json_text) == tree, "JSON form does not parse back equal"
        forms += [("yaml", yaml_text, parse_yaml), ("json", json_text, parse_json)]
    want = _encoded(tree)
    misses = []
    for name, form, parse in forms:
        try:
            back = _encoded(parse(form))
        except ConfigError as err:
            back = f"form refused: {err}"
        if back != want:
            misses.append(f"{name}: {back if isinstance(back, str) else 'other bytes'} (tree: "
                          f"{want if isinstance(want, str) else 'bytes'})")
    return ("exact" if again == blob else "decoded"), misses


def run(job: int, inputs: int, seconds: float | None, seed: int, failures: str | None, forms_every: int = 1) -> dict:
    rng = random.Random(seed * 1000 + job)
    pool = seeds()
    counts = {"inputs": 0, "error": 0, "decoded": 0, "exact": 0, "findings": 0, "not_exact": 0}
    start = time.perf_counter()
    while counts["inputs"] < inputs and (seconds is None or time.perf_counter() - start < seconds):
        blob = mutate(rng, rng.choice(pool), pool)
        counts["inputs"] += 1
        if counts["inputs"] % 50_000 == 0:  # a long run shows how far it got (and what it found so far)
            print(f"job {job}: {counts['inputs']:,} inputs, {counts['findings']} findings,"
                  f" {time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
        try:
            outcome, misses = check(blob, counts["inputs"] % forms_every == 0)
            counts[outcome] += 1
            if misses:
                counts["not_exact"] += 1
                if counts["not_exact"] <= 20:
                    _keep(failures, blob, "miss", "\n".join(misses) + "\n")
        except Exception as err:  # a finding: anything but the codec's own error
            counts["findings"] += 1
            if counts["findings"] <= 20:
                _keep(failures, blob, "finding", "".join(traceback.format_exception(err)))
    counts["seconds"] = time.perf_counter() - start
    return counts


def _keep(folder: str | None, blob: bytes, kind: str, why: str) -> None:
    if not folder:
        return
    path = Path(folder)
    path.mkdir(parents=True, exist_ok=True)
    name = f"{kind}-{hashlib.sha1(blob).hexdigest()[:12]}"
    (path / f"{name}.bin").write_bytes(blob)
    (path / f"{name}.txt").write_text(why)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--inputs", type=int, default=1_000_000, help="mutated inputs in all (default 1,000,000)")
    ap.add_argument("--seconds", type=float, help="stop each job after this long (a shorter pass)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=1, help="processes (default 1: the machine is shared)")
    ap.add_argument("--failures", default="/tmp/hfcprov-fuzz-config", help="where findings are written")
    ap.add_argument("--forms-every", type=int, default=1,
                    help="check the YAML and JSON forms on every Nth input only (PyYAML is ~85%% of the time;"
                         " the text forms are checked on every input)")
    args = ap.parse_args()
    share = -(-args.inputs // args.jobs)
    jobs = [(j, share, args.seconds, args.seed, args.failures, args.forms_every) for j in range(args.jobs)]
    if args.jobs == 1:
        results = [run(*jobs[0])]
    else:
        with multiprocessing.Pool(args.jobs) as pool:
            results = pool.starmap(run, jobs)
    total = {k: sum(r[k] for r in results) for k in results[0]}
    wall = max(r["seconds"] for r in results)
    print(f"{'inputs':>10} {'codec errors':>13} {'decoded':>9} {'byte-exact':>11} {'not exact':>10} {'findings':>9}"
          f" {'inputs/s':>9}")
    print(f"{total['inputs']:>10,} {total['error']:>13,} {total['decoded'] + total['exact']:>9,} {total['exact']:>11,}"
          f" {total['not_exact']:>10,} {total['findings']:>9,} {total['inputs'] / wall:>9,.0f}")
    print("not exact: decoded inputs whose text, YAML or JSON form does not encode back to the bytes the decoded"
          " tree encodes to (target 0)")
    if total["findings"] or total["not_exact"]:
        print(f"findings and misses written to {args.failures}")
    return 1 if total["findings"] or total["not_exact"] else 0


if __name__ == "__main__":
    sys.exit(main())
