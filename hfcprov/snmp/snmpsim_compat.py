"""Run snmpsim's command responder with its per-endpoint data file selection working on pysnmp 7.

snmpsim 1.2 picks a data file per request (community/context, then the
transport endpoint the request came in on) in ``handleMgmtOperation``
overrides; pysnmp 7 renamed that hook to ``handle_management_operation``, so
the overrides never run and every endpoint serves the community's file (and
snmpsim's ``probe_hash_context`` calls pysnmp 6 names). This entry point
re-attaches the same selection, written against pysnmp 7's names, under the
new hook and then runs snmpsim unchanged::

    python -m hfcprov.snmp.snmpsim_compat --data-dir=... --agent-udpv4-endpoint=...
"""

from __future__ import annotations

import sys


def _select_context(responder_obj, snmp_engine) -> bytes | None:
    """snmpsim's data-file choice: context (md5 of the community for v2c) / transport / source."""
    from hashlib import md5

    from snmpsim import datafile

    ctx = snmp_engine.observer.get_execution_context("rfc3412.receiveMessage:request")
    engine_id = ctx["contextEngineId"]
    engine_id = datafile.SELF_LABEL if engine_id == snmp_engine.snmpEngineID else engine_id.prettyPrint()
    for candidate in datafile.probe_context(ctx["transportDomain"], ctx["transportAddress"], engine_id,
                                            ctx["contextName"].prettyPrint()):
        name = md5(candidate).hexdigest().encode() if len(candidate) > 32 else candidate
        if name in responder_obj.snmpContext.context_names:
            return name
    return None


def _patch() -> None:
    from pysnmp.entity.rfc3413 import cmdrsp
    from snmpsim.commands import responder

    pairs = [
        (responder.GetCommandResponder, cmdrsp.GetCommandResponder),
        (responder.SetCommandResponder, cmdrsp.SetCommandResponder),
        (responder.NextCommandResponder, cmdrsp.NextCommandResponder),
        (responder.BulkCommandResponder, cmdrsp.BulkCommandResponder),
    ]
    for sim_class, base in pairs:
        if "handle_management_operation" in vars(sim_class):
            continue  # a fixed snmpsim: nothing to do

        def handle_management_operation(self, snmp_engine, state_reference, context_name, pdu, _base=base):
            context_name = _select_context(self, snmp_engine) or context_name
            _base.handle_management_operation(self, snmp_engine, state_reference, context_name, pdu)

        sim_class.handle_management_operation = handle_management_operation


def main() -> int:
    _patch()
    from snmpsim.commands import responder

    sys.argv[0] = "snmpsim-command-responder"
    return responder.main()


if __name__ == "__main__":
    sys.exit(main())
