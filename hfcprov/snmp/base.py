"""What every SNMP engine of hfcprov shares: the errors, typed values, and the walking logic.

Two engines implement ``BaseClient``: the lean v1/v2c one (``hfcprov.snmp.v2c``) and pysnmp's
for SNMPv3 (``hfcprov.snmp.client.PysnmpClient``). An engine provides ``_get`` and ``_bulk``
(lists of ``(oid, value)``; values are int, bytes, str for IpAddress/OID, None for
noSuchObject/noSuchInstance, ``END_OF_MIB`` past the agent's last object) and ``set_many``;
this class turns them into GETs of any size and table fetches that adapt to slow agents.
"""

from __future__ import annotations

from typing import NamedTuple

from hfcprov.errors import HfcprovError


class SnmpError(HfcprovError):
    """An SNMP request failed; the message names the host."""


class SnmpTimeout(SnmpError):
    """No answer within timeout x (retries + 1)."""


class SnmpAuthError(SnmpError):
    """The agent rejected the credentials (SNMPv3 report: unknown user, wrong digest, ...)."""


END_OF_MIB = object()  # a var-bind past the agent's last object
UNSET = object()  # ``set(..., type_)`` called without a value


class Typed(NamedTuple):
    """A value with its SMI type, for clients made with ``typed=True`` (``snmp get``/``walk`` print
    the type as net-snmp does). ``type`` is a ``hfcprov.config.ber`` type name ("Integer",
    "OctetString", "Counter32", ...) or "noSuchObject"/"noSuchInstance" (then ``value`` is None)."""

    type: str
    value: object


# A GETBULK that times out is asked again smaller: an agent that answers each var-bind slowly
# (0.3 s on a loaded CM) cannot fill a 60-var-bind answer within the timeout, but it can
# answer a few var-binds at a time. Repetitions shrink first, then the request is split. An
# engine that hears the slow agent's late answer (v2c) tells how long a var-bind takes, and
# later requests are sized to fit half the timeout.
SMALLER_REPETITIONS = 3
# The most var-binds one request asks: an answer slow agents can give within the time a client
# waits for it, and below the caps agents put on answers (snmpsim 64, many CMs lower).
MAX_VARBINDS = 40


def _assign_heads(heads, var_binds, out: dict) -> None:
    """``out[key]`` from the non-repeater answers: the value when the answer is the OID itself
    (``exact``: a scalar) or in its subtree (a column's first row), else None."""
    for i, (key, oid, exact) in enumerate(heads):
        name, value = var_binds[i] if i < len(var_binds) else (None, None)
        ok = isinstance(name, str) and (name == key if exact else name.startswith(oid + "."))
        out[key] = value if ok and value is not END_OF_MIB else None


class BaseClient:
    """Walking logic shared by the SNMP engines (see the module's docstring)."""

    timeout: float
    retries: int
    _seconds_per_varbind: dict | None = None
    hears_late_answers = False  # an engine that waits for a slow agent's late answer (v2c with patience)
    # the local address requests leave from (a dual-homed lab host's management side); None: the kernel's
    # choice. Used for targets of its family only.
    source: str | None = None

    def _source_for(self, family_v6: bool, any_address: str) -> str:
        return self.source if self.source and (":" in self.source) == family_v6 else any_address

    def slow(self, host: str, port: int, seconds_per_varbind: float) -> None:
        """An engine saw ``host`` answer late: it takes this long per var-bind."""
        if self._seconds_per_varbind is None:
            self._seconds_per_varbind = {}
        self._seconds_per_varbind[(host, port)] = seconds_per_varbind

    def varbind_budget(self, host: str, port: int) -> int | None:
        """How many var-binds one request to a known-slow agent may ask (fits half the timeout), or None."""
        per = (self._seconds_per_varbind or {}).get((host, port))
        return None if per is None else max(1, int(0.5 * self.timeout / max(per, 1e-6)))

    async def _get(self, host: str, port: int, oid_list: list[str]) -> list[tuple[str, object]]:
        raise NotImplementedError

    async def _bulk(self, host: str, port: int, non_repeaters: int, max_repetitions: int,
                    oid_list: list[str]) -> list[tuple[str, object]]:
        raise NotImplementedError

    async def set_many(self, host: str, port: int, var_binds: list[tuple[str, str, object]],
                       once: bool = False) -> list:
        """SET several objects in one PDU. ``once``: the request is sent once and its answer awaited
        for all the tries' time, never resent: for a SET that acts (a reset, an upgrade) an agent
        that answers late has already acted on the first copy, and would act on a second one."""
        raise NotImplementedError

    async def set(self, host: str, port: int, oid: str, type_: str, value=UNSET, once: bool = False) -> None:
        """SET one object; ``type_`` is an SMI type name as in ``hfcprov.config.ber`` (e.g. "Integer");
        ``once`` as in ``set_many``."""
        if value is UNSET:
            raise TypeError("set() needs the value after its type name")
        await self.set_many(host, port, [(oid, type_, value)], once=once)

    async def get_var_binds(self, host: str, port: int, oid_list: list[str]) -> list[tuple[str, object]]:
        """GET as the agent answered: ``(oid, value)`` in its order (``snmp get`` prints them so)."""
        return await self._get(host, port, oid_list)

    async def get(self, host: str, port: int, oid_list: list[str]) -> dict[str, object]:
        """GET scalars; the result maps each OID to its value (None when the agent has no such object)."""
        return {oid: (None if value is END_OF_MIB else value) for oid, value in await self._get(host, port, oid_list)}

    async def get_many(self, host: str, port: int, oid_list: list[str], per_request: int = 40) -> dict[str, object]:
        """GET any number of instances, ``per_request`` var-binds per PDU (agents cap answers); a
        request that times out is asked again in halves, down to one var-bind."""
        values: dict[str, object] = {}
        per_request = min(per_request, self.varbind_budget(host, port) or per_request)
        pending = [oid_list[i:i + per_request] for i in range(0, len(oid_list), per_request)]
        alive = False
        while pending:
            chunk = pending.pop(0)
            budget = self.varbind_budget(host, port)
            if budget is not None and len(chunk) > budget:  # learnt slow meanwhile
                pending[:0] = [chunk[i:i + budget] for i in range(0, len(chunk), budget)]
                continue
            try:
                values.update(await self.get(host, port, chunk))
                alive = True
            except SnmpTimeout:
                if len(chunk) == 1:
                    raise
                if not alive:  # slow or dead? one var-bind tells
                    if self.hears_late_answers:
                        raise
                    values.update(await self.get(host, port, chunk[:1]))
                    alive, chunk = True, chunk[1:]
                half = (len(chunk) + 1) // 2
                pending[:0] = [part for part in (chunk[:half], chunk[half:]) if part]
        return values

    async def fetch(self, host: str, port: int, scalars: list[str], columns: list[str],
                    max_repetitions: int | None = None, first_rows: list[str] = (),
                    stop=None) -> tuple[dict[str, object], dict[str, dict[str, object]]]:
        """Scalars and whole table columns in as few GETBULKs as the agent allows.

        The scalars ride as non-repeaters (GETNEXT of the OID minus its last arc) in the first
        request, as do ``first_rows`` columns (GETNEXT of the column: its first row, e.g. the
        CM's one docsIfCmStatusTable row, returned in the scalars dict under the column OID);
        the columns repeat until each leaves its subtree. ``max_repetitions`` defaults to
        what keeps an answer within ``MAX_VARBINDS``. ``stop(column, row_index)`` returning True ends a column early at that row (not
        kept), e.g. after a table's active rows. A request that times out is asked again with
        fewer repetitions, then split (``SMALLER_REPETITIONS``): a slow agent is read, slowly,
        instead of being reported unreachable. Returns
        ``({scalar_oid: value}, {column_oid: {row_index: value}})``.
        """
        if max_repetitions is None:
            max_repetitions = max(2, (MAX_VARBINDS - len(scalars) - len(first_rows)) // max(1, len(columns)))
        scalar_values: dict[str, object] = {}
        tables: dict[str, dict[str, object]] = {c: {} for c in columns}
        heads = [(s, s.rsplit(".", 1)[0], True) for s in scalars] + [(c, c, False) for c in first_rows]
        cursors = {c: c for c in columns}  # column -> last OID seen
        reps, width = max_repetitions, len(columns)  # adapted down on timeouts
        first = bool(heads)
        alive = False
        while cursors or first:
            budget = self.varbind_budget(host, port)
            if budget is not None:  # a slow agent: ask only what it answers within the timeout
                if first and len(heads) > budget:
                    await self._first_rows(host, port, heads, scalar_values)
                    first = False
                width = max(1, min(width, budget - (len(heads) if first else 0), len(cursors) or 1))
                reps = max(1, min(reps, (budget - (len(heads) if first else 0)) // width))
                if not cursors and not first:
                    break
            non_rep = heads if first else []
            room = max(1, MAX_VARBINDS - len(non_rep))
            active = list(cursors)[:min(width, room)]
            request = [oid for _key, oid, _exact in non_rep] + [cursors[c] for c in active]
            reps = max(1, min(reps, room // max(1, len(active))))
            try:
                var_binds = await self._bulk(host, port, len(non_rep), reps, request)
                alive = True
            except SnmpTimeout:
                if not alive:  # slow or dead? one var-bind tells, so a dead modem costs two timeouts
                    if self.hears_late_answers:
                        raise  # the engine already waited for a late answer: nobody is there
                    await self._bulk(host, port, 1, 0, request[:1])
                    alive = True
                if first:  # the scalars on their own (in halves if need be), the columns after
                    await self._first_rows(host, port, heads, scalar_values)
                    first = False
                    reps = max(1, reps // SMALLER_REPETITIONS)
                elif reps > 1:
                    reps = max(1, reps // SMALLER_REPETITIONS)
                elif width > 1:
                    width = max(1, width // 2)
                else:
                    raise
                continue
            if first:
                _assign_heads(heads, var_binds, scalar_values)
                var_binds = var_binds[len(non_rep):]
                first = False
            if not active:
                continue
            done = set()
            before = {c: cursors[c] for c in active}
            for i, (oid, value) in enumerate(var_binds):
                column = active[i % len(active)]
                if column in done or not isinstance(oid, str) or not oid.startswith(column + ".") \
                        or value is END_OF_MIB:
                    done.add(column)  # left the column's subtree (or endOfMibView)
                    continue
                index = oid[len(column) + 1:]
                if stop is not None and stop(column, index):
                    done.add(column)
                    continue
                tables[column][index] = value
                cursors[column] = oid
            for column in active:
                # finished when it left its subtree; also when it did not advance (empty or
                # non-increasing answer), so a broken agent cannot keep us looping
                if column in done or cursors[column] == before[column]:
                    cursors.pop(column, None)
                else:  # columns take turns, so a narrowed request still reaches every column
                    cursors[column] = cursors.pop(column)
        return scalar_values, tables

    async def _first_rows(self, host, port, heads, out: dict) -> None:
        """GETNEXT of each (key, request OID, exact) in one GETBULK of non-repeaters, split in halves on
        timeouts; ``out[key]`` is the value when the answer is the OID itself (``exact``) or in
        its subtree, else None."""
        pending = [heads] if heads else []
        while pending:
            group = pending.pop(0)
            budget = self.varbind_budget(host, port)
            if budget is not None and len(group) > budget:
                pending[:0] = [group[i:i + budget] for i in range(0, len(group), budget)]
                continue
            try:
                var_binds = await self._bulk(host, port, len(group), 0, [oid for _key, oid, _exact in group])
            except SnmpTimeout:
                if len(group) == 1:
                    raise
                half = (len(group) + 1) // 2
                pending[:0] = [group[:half], group[half:]]
                continue
            _assign_heads(group, var_binds, out)

    @property
    def once_timeout(self) -> float:
        """How long a request sent once (``set_many(once=True)``) is awaited: every try's timeout."""
        return self.timeout * (self.retries + 1)

    def _timeout_error(self, host: str, port: int, once: bool = False) -> SnmpTimeout:
        if once:
            return SnmpTimeout(f"{host}:{port}: no SNMP answer in {self.once_timeout:g} s "
                               "(sent once: a SET that acts is not resent)")
        return SnmpTimeout(f"{host}:{port}: no SNMP answer in {self.timeout:g} s x {self.retries + 1} tries")

    def close(self) -> None:
        pass
