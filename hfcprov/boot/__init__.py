"""The boot chain around TFTP: DHCP (Kea), Time of Day, and who holds which lease.

A cable modem boots DHCP -> Time of Day -> TFTP -> registration. ``hfcprov.tftp`` serves the
file; this package is the rest, driven from the same inventory:

- ``boot.dhcp``: Kea host reservations from the inventory (address, boot file name by the same
  rule as ``build --pattern``, TFTP/time/log servers, time offset, CableLabs options 122/125 and
  DHCPv6 option 17): ``plan_reservations``, ``kea_config``, ``BootServers``;
- ``boot.kea``: Kea's config files (comments), ``check_config`` (``kea-dhcp4/6 -t``) and
  ``KeaControl`` (control socket: config-get/test/set without a restart, lease4/6-get);
- ``boot.leases``: ``LeaseSource.lookup(address)`` from Kea's memfile lease files
  (``MemfileLeases``) or its lease API (``KeaLeaseApi``): what lease-bound TFTP checks;
- ``boot.tod``: ``TimeServer`` (RFC 868, UDP and TCP, IPv4 and IPv6) and ``query_time``;
- ``boot.dhcpclient``: the modem's side, relayed as a CMTS does: ``acquire4``/``acquire6``
  return what the server handed out (address, TFTP servers, file, time servers, offset);
- ``boot.relay``: the CMTS's DHCP relay agent (v4 giaddr, v6 RELAY-FORW/REPL), telling who
  got which address.

Imports only ``tiers`` (inventory, file names), ``macaddr`` and ``errors``; ``tftp`` imports it.
"""
