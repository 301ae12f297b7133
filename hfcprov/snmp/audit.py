"""Audit deployed modems: what each one applied (DOCS-QOS3-MIB) against the config file it should run.

Per modem, one GETBULK reads sysDescr, docsDevServerConfigFile,
docsIfCmStatusValue, the modem's service flows (docsQosServiceFlowDirection,
docsQosServiceFlowBufferSize) and the active rows of docsQosParamSetTable (max
rate, burst, min reserved rate, Buffer Control minimum/target/maximum, and on a
DOCSIS 3.1 modem the AQM disable/latency target/algorithm columns): active
rows sort first in every column, so each column's walk stops at its first
admitted/provisioned row. Only a flow with no active row costs one more GET, of
its provisioned row. One round trip and about a fifth of the var-binds of a
table walk: what a modem's (or a simulator's) CPU pays for. The expected flows
come from decoding the intended config file with ``hfcprov.config.read_config``
and ``hfcprov.model.service_flows``; config flows and the modem's SFIDs are
paired per direction in order (the n-th upstream flow of the file is the modem's
n-th upstream SFID), the way a CM registers them.

With SNMPv2c a wrong community is indistinguishable from a dead modem (agents
drop such requests silently): both are reported unreachable. SNMPv3 agents
answer a wrong user or key with a report, which becomes auth-failure.

Modems are audited concurrently (bounded by ``concurrency``); each result is
handed to ``on_result`` as soon as it is known, so a dead modem only costs its
own timeout and output streams.
"""

from __future__ import annotations

import ipaddress
import os
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path

from hfcprov import mib
from hfcprov.errors import HfcprovError
from hfcprov.model import AQM_PARAMS, ASF_PARAMS, QOS_PARAMS, AggregateServiceFlow, ServiceFlow
from hfcprov.snmp import oids
from hfcprov.snmp.base import SnmpAuthError, SnmpError, SnmpTimeout
from hfcprov.snmp.client import Credentials, SnmpClient
from hfcprov.snmp.pacing import KeyedPacer, for_each
from hfcprov.snmp.typecheck import problem

IN_SYNC, DRIFTED, WRONG_CONFIG, OFFLINE, UNREACHABLE, AUTH_FAILURE, ERROR = (
    "in-sync", "drifted", "wrong-config", "offline", "unreachable", "auth-failure", "error")
STATUSES = (IN_SYNC, DRIFTED, WRONG_CONFIG, OFFLINE, UNREACHABLE, AUTH_FAILURE, ERROR)

# audited field -> (label in reports, how to read it from a ServiceFlow): the model's QoS parameters
FIELDS = QOS_PARAMS


class BadValue(HfcprovError):
    """A modem sent a value its MIB does not allow: the modem's verdict is ``error``, naming it."""


class AuditError(HfcprovError):
    """The audit cannot start (bad inventory row, missing config folder)."""


@dataclass(frozen=True)
class AuditTarget:
    """One modem to audit: where to reach it and which config file it should run."""

    mac: str
    host: str
    port: int = 161
    config: str | None = None  # expected config file name (what docsDevServerConfigFile should say)
    where: str = ""  # inventory row, for messages
    guessed: bool = False  # config name came from the file-name pattern, not the inventory
    cmts: str = ""  # the CMTS the modem hangs off (inventory column "cmts"): shards and rate caps


@dataclass
class Drift:
    flow: str  # "upstream flow 1 (sfid 3)"
    field: str  # key of FIELDS, or "flow" for a missing flow
    expected: object
    actual: object

    def __str__(self) -> str:
        if self.field in ("flow", "asf"):
            return f"{self.flow}: {self.expected}, {self.actual}"
        if self.field.startswith("asf:"):
            key = self.field[4:]
            label = ASF_PARAMS[key][0] if key in ASF_PARAMS else key.replace("_", " ")
            return f"{self.flow}: {label} {_num(self.expected)} asked, {_num(self.actual)} applied"
        return (f"{self.flow}: {FIELDS[self.field][0]} {_shown(self.field, self.expected)} asked, "
                f"{_shown(self.field, self.actual)} applied")


@dataclass
class ModemAudit:
    mac: str
    host: str
    port: int
    status: str
    config_file: str | None = None  # what the modem reports it loaded
    boot_state: str | None = None  # docsDevServerBootState label, e.g. "operational(1)"
    tftp_server: str | None = None  # docsDevServerConfigTftpAddress: where it fetched its file
    expected_config: str | None = None
    cm_status: str | None = None  # docsIfCmStatusValue label, e.g. "operational(12)"
    sys_descr: str | None = None
    drifts: list[Drift] = field(default_factory=list)
    buffer_sizes: dict[str, int] = field(default_factory=dict)  # "upstream flow 1" -> docsQosServiceFlowBufferSize
    # DOCSIS 3.1 AQM columns: True compared, False not exposed (a DOCSIS 3.0 MIB), None nothing to compare
    aqm_exposed: bool | None = None
    message: str = ""
    seconds: float = 0.0

    @property
    def detail(self) -> str:
        if self.drifts:
            return summarize(self.drifts)
        return self.message

    def as_dict(self) -> dict:
        """Every field, the drifts as dicts with their text, and ``detail``: a stored or printed row.
        Field by field: ``dataclasses.asdict`` deep-copies, a cost a plant-wide run pays per modem."""
        d = {name: getattr(self, name) for name in _AUDIT_FIELDS}
        d["drifts"] = [{"flow": x.flow, "field": x.field, "expected": x.expected, "actual": x.actual, "text": str(x)}
                       for x in self.drifts]
        d["buffer_sizes"] = dict(self.buffer_sizes)
        d["detail"] = self.detail
        return d


_AUDIT_FIELDS = tuple(f.name for f in fields(ModemAudit))


def _num(v) -> str:
    return str(int(v)) if isinstance(v, float) and v.is_integer() else str(v)


def _shown(key: str, value) -> str:
    """A compared value as text: an enumerated column's label (docsisPIE(3), true(1)), else the number."""
    if isinstance(value, (int, float)) and key in oids.PARAM_SET:
        label = mib.enum_label(oids.PARAM_SET[key], int(value))
        if label:
            return f"{label}({int(value)})"
    return _num(value)


def targets_from_inventory(rows: list[dict], default_port: int = 161, pattern: str = "{mac}.cm") -> list[AuditTarget]:
    """Audit targets from ``hfcprov.tiers.load_inventory`` rows.

    A row needs ``ip`` (or ``host``); ``port``, ``config`` (the file name the modem should have
    loaded, defaulting to ``pattern``, the build's default) and ``cmts`` (the CMTS it is on, for
    sharding and per-CMTS rate caps) are optional.
    """
    targets = []
    for n, row in enumerate(rows, 1):
        host = row.get("ip") or row.get("host")
        where = f"inventory row {n} (mac {row.get('mac')})"
        if not host:
            raise AuditError(f"{where}: no ip or host column to reach the modem")
        try:
            port = int(row.get("port") or row.get("snmp_port") or default_port)
        except ValueError:
            raise AuditError(f"{where}: port {row.get('port')!r} is not a number") from None
        config = row.get("config") or row.get("config_file")
        guessed = not config
        if guessed:
            config = pattern.format(**row)
        targets.append(AuditTarget(mac=row["mac"], host=str(host), port=port, config=str(config), where=where,
                                   guessed=guessed, cmts=str(row.get("cmts") or "")))
    return targets


class ExpectedConfigs:
    """Decoded expected configs, by file name, from a folder; each file is decoded once."""

    def __init__(self, folder: str | Path | None, secret: bytes | None = None):
        self.folder = Path(folder) if folder else None
        self.secret = secret
        self._cache: dict[str, tuple[list[ServiceFlow], list[AggregateServiceFlow]] | HfcprovError] = {}
        self._present: dict[str, bool] = {}  # has(): asked for every modem, the disk answers once per name
        self._shapes: dict[str | None, tuple[int, list[str], bool]] = {}  # request_shape, per config name
        self._asked: dict[str, list[list[tuple[str, object]]]] = {}

    def _read(self, name: str) -> tuple[list[ServiceFlow], list[AggregateServiceFlow]]:
        if name not in self._cache:
            from hfcprov.config import read_config
            from hfcprov.model import aggregate_service_flows, service_flows

            path = self.folder / Path(name).name
            try:
                tree = read_config(path, secret=self.secret)
                self._cache[name] = (service_flows(tree), aggregate_service_flows(tree))
            except HfcprovError as err:
                self._cache[name] = err
        found = self._cache[name]
        if isinstance(found, HfcprovError):
            raise found
        return found

    def flows(self, name: str) -> list[ServiceFlow]:
        return self._read(name)[0]

    def aggregates(self, name: str) -> list[AggregateServiceFlow]:
        return self._read(name)[1]

    def asked(self, name: str) -> list[list[tuple[str, object]]]:
        """Per flow of ``flows(name)``, the (field, value) pairs of ``FIELDS`` its file sets: the
        same for every modem of that config, so worked out once."""
        asked = self._asked.get(name)
        if asked is None:
            asked = self._asked[name] = _asked_fields(self.flows(name))
        return asked

    def request_shape(self, target: AuditTarget) -> tuple[int, list[str], bool]:
        """GETBULK repetitions, the param-set columns to read for one modem, and whether to read its
        Aggregate Service Flows: the same for every modem of one config, so worked out once per name.

        Knowing the config the modem should run (k flows), k + 1 repetitions bring every flow
        and the step past them (which shows there is no flow the file does not ask for) in one
        answer, and only the columns of fields the file sets are read: the fewer var-binds, the
        less work for the agent (a CM's CPU is weak; snmpsim's is what caps a lab's audit rate).
        The ASF table is read only for a file with TLV 70/71. Otherwise 3 repetitions (two flows
        and the step past them) of every compared column.
        """
        name = target.config if target.config and not target.guessed else None
        shape = self._shapes.get(name)
        if shape is None:
            shape = self._shapes[name] = _shape_for(name, self)
        return shape

    def has(self, name: str) -> bool:
        if self.folder is None:
            return False
        present = self._present.get(name)
        if present is None:
            present = self._present[name] = (self.folder / _file_name(name)).is_file()
        return present


def _asked_fields(flows: list[ServiceFlow]) -> list[list[tuple[str, object]]]:
    """Per flow, the (field, value) pairs of ``FIELDS`` its file sets: what the audit compares."""
    return [[(key, get(flow)) for key, (_label, get) in FIELDS.items() if get(flow) is not None] for flow in flows]


def _file_name(name: str) -> str:
    """A config file's name without its folders (a modem may report a path)."""
    return os.path.basename(name)


async def audit_modem(client: SnmpClient, target: AuditTarget, configs: ExpectedConfigs) -> ModemAudit:
    """Audit one modem; never raises: whatever a modem sends (a value of the wrong type, length
    or range, a malformed or missing answer) becomes this modem's verdict."""
    started = time.monotonic()
    result = ModemAudit(mac=target.mac, host=target.host, port=target.port, status=ERROR,
                        expected_config=target.config)
    try:
        reps, columns, asf = configs.request_shape(target)
        scalars, tables = await client.fetch(
            target.host, target.port, [oids.SYS_DESCR, oids.CONFIG_FILE, *oids.BOOT_SCALARS],
            [oids.SF_DIRECTION, oids.SF_BUFFER_SIZE, *columns, *(oids.ASF.values() if asf else ())],
            max_repetitions=reps, first_rows=[oids.CM_STATUS_VALUE], stop=_past_active_rows)
        _check_values(scalars, tables)
        _boot_fields(result, scalars)
        name = _check_state(result, target, scalars, configs)
        if name is not None:
            # the param-set columns as read: column -> row index (ifIndex.type.sfid) -> value
            params = {column: dict(tables.get(column, ())) for column in _PARAM_COLUMNS}
            # a flow that is provisioned but not active has no active row: judge its provisioned one
            inactive = [f for f in tables[oids.SF_DIRECTION]
                        if all(params[c].get(i) is None for c, i in _param_rows([f], oids.PARAM_SET_ACTIVE))]
            if inactive:
                rows = _param_rows(inactive, oids.PARAM_SET_PROVISIONED)
                more = await client.get_many(target.host, target.port, [f"{c}.{i}" for c, i in rows])
                _check_values(more, {})
                for column, index in rows:
                    params[column][index] = more.get(f"{column}.{index}")
            _compare_flows(result, name, tables, params, configs)
    except SnmpTimeout as err:
        result.status, result.message = UNREACHABLE, str(err)
    except SnmpAuthError as err:
        result.status, result.message = AUTH_FAILURE, str(err)
    except (SnmpError, HfcprovError) as err:
        result.status, result.message = ERROR, str(err)
    except Exception as err:  # noqa: BLE001 - a bug must not stop the other modems' audit
        result.status = ERROR
        result.message = f"internal error auditing this modem ({type(err).__name__}: {err}); please report it"
    result.seconds = time.monotonic() - started
    return result


def _check_values(scalars: dict, tables: dict) -> None:
    """``BadValue`` for the first value that does not fit its object's MIB syntax."""
    for oid, value in scalars.items():
        bad = problem(oid, value, oid[:-2] if oid.endswith(".0") else oid)
        if bad:
            raise BadValue(bad)
    for column, rows in tables.items():
        for index, value in rows.items():
            bad = problem(f"{column}.{index}", value, column)
            if bad:
                raise BadValue(bad)


def _boot_fields(result: ModemAudit, scalars) -> None:
    """What the modem says about its own boot: docsDevServerBootState and the TFTP server it
    fetched its config file from (docsDevServerConfigTftpAddressType/Address, IPv4 or IPv6)."""
    state = scalars.get(oids.BOOT_STATE)
    if state is not None:
        label = mib.enum_label("docsDevServerBootState", state)
        result.boot_state = f"{label}({state})" if label else str(state)
    result.tftp_server = inet_address(scalars.get(oids.CONFIG_TFTP_TYPE), scalars.get(oids.CONFIG_TFTP))


def inet_address(kind, value) -> str | None:
    """An InetAddressType + InetAddress pair (RFC 4001) as text; None when absent or unknown(0)."""
    if not isinstance(value, bytes) or not value:
        return None
    if kind in (1, 3) and len(value) in (4, 8):  # ipv4, ipv4z (zone index after the address)
        return str(ipaddress.IPv4Address(value[:4]))
    if kind in (2, 4) and len(value) in (16, 20):  # ipv6, ipv6z
        return str(ipaddress.IPv6Address(value[:16]))
    if kind == 16:  # dns
        return value.decode(errors="replace")
    return None


def _text(value) -> str | None:
    if value is None:
        return None
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


def _check_state(result: ModemAudit, target: AuditTarget, scalars, configs: ExpectedConfigs) -> str | None:
    """Status, file name and reachability checks; the config file name to compare against, or
    None when the verdict is already in (offline, wrong config, nothing to compare with)."""
    result.sys_descr = _text(scalars.get(oids.SYS_DESCR))
    result.config_file = _text(scalars.get(oids.CONFIG_FILE))
    cm_status = scalars.get(oids.CM_STATUS_VALUE)
    if cm_status is not None:
        label = mib.enum_label("docsIfCmStatusValue", cm_status)
        result.cm_status = f"{label}({cm_status})" if label else str(cm_status)
    if cm_status != oids.CM_OPERATIONAL:
        result.status = OFFLINE
        result.message = f"docsIfCmStatusValue {result.cm_status or 'missing'}"
        return None
    reported = _file_name(result.config_file) if result.config_file else None
    expected = target.config
    if target.guessed and expected and not configs.has(expected):
        expected = None  # the inventory names no file and there is no per-modem one: judge the file it reports
    if expected and reported != _file_name(expected):
        result.status = WRONG_CONFIG
        result.message = f"loaded {reported or '(none)'}, expected {_file_name(expected)}"
        return None
    name = expected or reported
    result.expected_config = name
    if not name:
        result.status, result.message = ERROR, "modem reports no config file and the inventory names none"
        return None
    if configs.folder is None:
        result.status, result.message = ERROR, "no --configs folder to read the expected config from"
        return None
    configs.flows(name)  # a broken expected file is this modem's error, before asking for more
    return name


_PARAM_COLUMNS = tuple(oids.PARAM_SET.values())
_PARAM_COLUMN_SET = frozenset(_PARAM_COLUMNS)
_ACTIVE = str(oids.PARAM_SET_ACTIVE)
_COMPARED_COLUMNS = tuple(oids.PARAM_SET[key] for key in FIELDS)  # the columns a comparison can use


def _shape_for(name: str | None, configs: ExpectedConfigs) -> tuple[int, list[str], bool]:
    try:
        expected = configs.flows(name) if name and configs.has(name) else None
        aggregates = configs.aggregates(name) if expected else []
    except HfcprovError:
        expected, aggregates = None, []  # reported when the flows are compared
    if not expected:
        return 3, list(_COMPARED_COLUMNS), False
    columns = [oids.PARAM_SET[key] for key, (_label, get) in FIELDS.items()
               if any(get(flow) is not None for flow in expected)]
    return max(len(expected), len(aggregates)) + 1, columns, bool(aggregates)


def _past_active_rows(column: str, index: str) -> bool:
    """Param-set rows sort active(1) first (index ifIndex.type.sfid): stop a column's walk
    at its first admitted/provisioned row."""
    if column not in _PARAM_COLUMN_SET:
        return False
    parts = index.rsplit(".", 2)
    return len(parts) < 2 or parts[-2] != _ACTIVE


def _param_rows(flows: list[str], set_type: int) -> list[tuple[str, str]]:
    """(column, row index) of one param-set row (active, provisioned) of each flow (index ifIndex.sfid)."""
    out = []
    for index in flows:
        if_index, _, sfid = index.rpartition(".")
        out += [(column, f"{if_index}.{set_type}.{sfid}") for column in _PARAM_COLUMNS]
    return out


def _compare_flows(result: ModemAudit, name: str, tables, params: dict[str, dict[str, object]], configs) -> None:
    """``params``: the param-set columns, column -> row index -> value (None: the modem has none)."""
    expected_flows = configs.flows(name)
    by_column = {column: {index: value for index, value in params.get(column, {}).items() if value is not None}
                 for column in _PARAM_COLUMNS}
    sfids: dict[int, int] = {}  # position of a flow in the file -> the modem's SFID paired with it
    result.drifts = _drifts(expected_flows, {**tables, **by_column}, result, sfids, configs.asked(name))
    aggregates = configs.aggregates(name)
    if aggregates and oids.ASF["direction"] in tables:
        result.drifts += _asf_drifts(aggregates, expected_flows, sfids, tables)
    result.status = DRIFTED if result.drifts else IN_SYNC
    if not result.drifts:
        result.message = f"{len(expected_flows)} flows as in {name}"
        if aggregates:
            result.message += f", {len(aggregates)} aggregate service flows"
        if result.aqm_exposed is False:
            result.message += "; AQM not exposed (no DOCSIS 3.1 AQM columns), not compared"


def _drifts(expected: list[ServiceFlow], tables, result: ModemAudit, sfids: dict | None = None,
            asked_of: list[list[tuple[str, object]]] | None = None) -> list[Drift]:
    """``asked_of``: ``ExpectedConfigs.asked`` of the file (``_asked_fields(expected)`` when not given)."""
    if asked_of is None:
        asked_of = _asked_fields(expected)
    # rows of docsQosParamSetTable: index ifIndex.type.sfid
    rows: dict[int, dict[int, dict[str, object]]] = {}  # sfid -> type -> field -> value
    row_of: dict[str, dict | None] = {}  # the columns share their rows' indexes: each parsed once
    for key, column in oids.PARAM_SET.items():
        for index, value in tables[column].items():
            row = row_of.get(index, False)
            if row is False:
                parts = index.split(".")
                row = row_of[index] = None if len(parts) < 3 else \
                    rows.setdefault(int(parts[-1]), {}).setdefault(int(parts[-2]), {})
            if row is not None:
                row[key] = value
    direction_of: dict[int, str] = {}
    for index, value in tables[oids.SF_DIRECTION].items():
        direction_of[int(index.split(".")[-1])] = oids.DIRECTION.get(value, str(value))
    buffer_size = {int(i.split(".")[-1]): v for i, v in tables[oids.SF_BUFFER_SIZE].items()}
    drifts = []
    for direction in ("upstream", "downstream"):
        want = [(pos, f) for pos, f in enumerate(expected) if f.direction == direction]
        have = sorted(s for s, d in direction_of.items() if d == direction)
        for n, (pos, flow) in enumerate(want, 1):
            name = f"{direction} flow {n}"
            if n > len(have):
                drifts.append(Drift(name, "flow", "in the config file", "not on the modem"))
                continue
            sfid = have[n - 1]
            if sfids is not None:
                sfids[pos] = sfid
            name = f"{name} (sfid {sfid})"
            sets = rows.get(sfid, {})
            applied = sets.get(oids.PARAM_SET_ACTIVE) or sets.get(oids.PARAM_SET_PROVISIONED) or {}
            if buffer_size.get(sfid) is not None:
                result.buffer_sizes[f"{direction} flow {n}"] = buffer_size[sfid]
            for key, asked in asked_of[pos]:
                if _aqm_not_exposed(result, key, applied.get(key)):
                    continue
                actual = applied.get(key)
                if actual is None or _differs(actual, asked):
                    drifts.append(Drift(name, key, asked, actual))
        for sfid in have[len(want):]:
            drifts.append(Drift(f"{direction} sfid {sfid}", "flow", "not in the config file", "active on the modem"))
    return drifts


def _differs(actual, asked) -> bool:
    if isinstance(asked, str) or isinstance(actual, bytes):  # a service class name
        text = actual.decode(errors="replace") if isinstance(actual, bytes) else str(actual)
        return text != str(asked)
    return int(actual) != int(asked)


def _asf_drifts(aggregates: list[AggregateServiceFlow], flows: list[ServiceFlow], sfids: dict[int, int],
                tables) -> list[Drift]:
    """The file's Aggregate Service Flows against the modem's docsQosAsfTable, paired per direction
    in order (as the flows are): each ASF parameter the file sets, and which SFIDs are its members
    (the low latency flow, 70/71.42.1, and the classic one)."""
    rows: dict[int, dict[str, object]] = {}  # asfid -> field -> value (index ifIndex.asfid)
    for key, column in oids.ASF.items():
        for index, value in tables.get(column, {}).items():
            rows.setdefault(int(index.split(".")[-1]), {})[key] = value
    drifts = []
    for direction in ("upstream", "downstream"):
        want = [a for a in aggregates if a.direction == direction]
        have = sorted(i for i, r in rows.items() if oids.DIRECTION.get(r.get("direction")) == direction)
        for n, asf in enumerate(want, 1):
            name = f"{direction} aggregate {n}"
            if n > len(have):
                drifts.append(Drift(name, "asf", "in the config file", "not on the modem"))
                continue
            row = rows[have[n - 1]]
            name = f"{name} (asf {have[n - 1]})"
            for key, (_label, get) in ASF_PARAMS.items():
                asked = get(asf)
                if asked is not None and (row.get(key) is None or int(row[key]) != int(asked)):
                    drifts.append(Drift(name, f"asf:{key}", asked, row.get(key)))
            members = [pos for pos, f in enumerate(flows) if f.asf_ref is not None and f.asf_ref == asf.ref]
            low = [pos for pos in members if asf.low_latency_ref is not None and flows[pos].ref == asf.low_latency_ref]
            classic = [pos for pos in members if pos not in low]
            for key, positions in (("low_latency_sfid", low), ("classic_sfid", classic)):
                if len(positions) != 1 or positions[0] not in sfids:
                    continue
                if row.get(key) is not None and int(row[key]) != sfids[positions[0]]:
                    drifts.append(Drift(name, f"asf:{key}", sfids[positions[0]], row[key]))
        for asfid in have[len(want):]:
            drifts.append(Drift(f"{direction} asf {asfid}", "asf", "not in the config file", "active on the modem"))
    return drifts


def summarize(drifts: list[Drift], shown: int = 6) -> str:
    """The drifts as one line, long lists counted: ``62 extra upstream flows: sfid 3, 4, ...``."""
    extra: dict[str, list[str]] = {}
    missing: dict[str, list[str]] = {}
    fields: dict[str, list[Drift]] = {}
    for d in drifts:
        if d.field in ("flow", "asf") and d.expected == "not in the config file":
            extra.setdefault(d.flow.split(" ")[0] + (" flows" if d.field == "flow" else " aggregates"), []).append(
                d.flow.split(" ", 1)[1])
        elif d.field in ("flow", "asf"):
            missing.setdefault(d.flow.split(" ")[0] + (" flows" if d.field == "flow" else " aggregates"),
                               []).append(d.flow)
        else:
            fields.setdefault(d.field, []).append(d)
    parts = []
    for kind, items in fields.items():
        if len(items) <= 2:
            parts += [str(d) for d in items]
        else:
            key = kind[4:] if kind.startswith("asf:") else kind
            label = (ASF_PARAMS if kind.startswith("asf:") else FIELDS).get(key, (key,))[0]
            parts.append(f"{label} differs on {len(items)} flows: {_listed([str(d) for d in items], shown)}")
    for kind, items in missing.items():
        parts.append(f"{len(items)} {kind} of the config file not on the modem" if len(items) > 2 else
                     "; ".join(f"{i}: in the config file, not on the modem" for i in items))
    for kind, items in extra.items():
        if len(items) > 2:
            parts.append(f"{len(items)} extra {kind}: {_listed(items, shown)}")
        else:
            parts += [f"{kind.split(' ')[0]} {i}: not in the config file, active on the modem" for i in items]
    return "; ".join(parts)


def _listed(items: list[str], shown: int) -> str:
    more = len(items) - shown
    return ", ".join(items[:shown]) + (f" (and {more} more)" if more > 0 else "")


def _aqm_not_exposed(result: ModemAudit, key: str, actual) -> bool:
    """Is ``key`` a DOCSIS 3.1 AQM column the modem does not serve? Then it is skipped, not a drift
    (a DOCSIS 3.0 modem's DOCS-QOS3-MIB predates them); ``result.aqm_exposed`` records which."""
    if key not in AQM_PARAMS:
        return False
    exposed = actual is not None
    result.aqm_exposed = exposed or bool(result.aqm_exposed)
    return not exposed


@dataclass
class AuditSummary:
    counts: Counter
    seconds: float
    total: int

    @property
    def all_in_sync(self) -> bool:
        return self.counts.get(IN_SYNC, 0) == self.total

    @property
    def rate(self) -> float:
        return self.total / self.seconds if self.seconds > 0 else 0.0

    def line(self) -> str:
        parts = ", ".join(f"{self.counts[s]} {s}" for s in STATUSES if self.counts.get(s))
        return f"audited {self.total} modems in {self.seconds:.1f} s ({self.rate:.0f}/s): {parts or 'none'}"


async def audit_all(targets: list[AuditTarget], credentials: Credentials, configs: ExpectedConfigs,
                    on_result: Callable[[ModemAudit], None] | None = None, concurrency: int = 64,
                    timeout: float = 2.0, retries: int = 1, patience: float | None = None,
                    cmts_rate: float | None = None) -> AuditSummary:
    """Audit every target with at most ``concurrency`` modems in flight; results go to ``on_result``
    in completion order as they arrive. ``patience``: see ``SnmpClient`` (a slow modem's late answer);
    ``cmts_rate``: at most this many modems started per second on each CMTS (``AuditTarget.cmts``)."""
    started = time.monotonic()
    client = SnmpClient(credentials, timeout=timeout, retries=retries, patience=patience)
    pacer = KeyedPacer(cmts_rate, key=lambda t: t.cmts)
    try:
        counts = await for_each(targets, concurrency, lambda t: audit_modem(client, t, configs), on_result,
                                before=pacer.wait)
    finally:
        client.close()
    return AuditSummary(counts, time.monotonic() - started, len(targets))
