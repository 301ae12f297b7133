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
    shared = _endpoint_data().get(tuple(ctx["transportDomain"])[-1])
    if shared is not None and shared in responder_obj.snmpContext.context_names:
        return shared
    engine_id = ctx["contextEngineId"]
    engine_id = datafile.SELF_LABEL if engine_id == snmp_engine.snmpEngineID else engine_id.prettyPrint()
    for candidate in datafile.probe_context(ctx["transportDomain"], ctx["transportAddress"], engine_id,
                                            ctx["contextName"].prettyPrint()):
        name = md5(candidate).hexdigest().encode() if len(candidate) > 32 else candidate
        if name in responder_obj.snmpContext.context_names:
            return name
    return None


COMMUNITIES_ENV = "HFCPROV_SNMPSIM_COMMUNITIES"  # a 0600 JSON file: data file name -> v2c community
ENDPOINTS_ENV = "HFCPROV_SNMPSIM_ENDPOINT_DATA"  # a JSON list: the data file name each endpoint serves
_endpoints: dict | None = None


def _endpoint_data() -> dict[int, bytes]:
    """Endpoint number -> the data file (by its name) it serves, when ``$HFCPROV_SNMPSIM_ENDPOINT_DATA``
    gives them: many endpoints then share a few data files, which snmpsim reads and indexes once
    (100,000 simulated modems of ten kinds: ten files, not 100,000)."""
    global _endpoints
    if _endpoints is None:
        import json
        import os

        path = os.environ.get(ENDPOINTS_ENV)
        names = json.load(open(path)) if path else []  # noqa: SIM115 - read once at start
        _endpoints = {n: name.encode() for n, name in enumerate(names)}
    return _endpoints


def _community_aliases() -> None:
    """snmpsim takes a v2c community from its data file's name (``public.snmprec``); with
    ``$HFCPROV_SNMPSIM_COMMUNITIES`` a data file's name is an alias and its community comes from
    that (private) file, so no community is ever a file name others can list."""
    import json
    import os

    from snmpsim import datafile

    path = os.environ.get(COMMUNITIES_ENV)
    if not path:
        return
    with open(path) as f:
        aliases = json.load(f)
    listed = datafile.get_data_files

    def get_data_files(tgt_dir, top_len=None):
        return [(full_path, parser, aliases.get(name, name)) for full_path, parser, name in listed(tgt_dir, top_len)]

    datafile.get_data_files = get_data_files


def _patch() -> None:
    from pysnmp.entity.rfc3413 import cmdrsp
    from snmpsim.commands import responder

    _community_aliases()

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
