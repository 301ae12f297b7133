"""End-host presets: the ``TcpOptions`` that make a simulated host behave like a named TCP stack.

Where the RFCs leave a choice, stacks differ, and the simulator follows whichever stack a
comparison is against. A preset is a plain mapping of ``TcpOptions`` fields; a scenario names
one as ``tcp: {host: linux}`` (the other ``tcp`` keys given beside it win).

- ``linux``: the kernel TCP the emulated modem's hosts run (6.x, as measured by
  ``bench/sim_vs_emu.py``): 1448-byte segments behind 52 bytes of IP/TCP headers with timestamps;
  200 ms minimum RTO kept above srtt and a 40 ms delayed ACK (``hfcprov.sim.mac.CALIBRATED_TCP``,
  the hosts the MAC was calibrated with); window growth by the segments each ACK covers; CUBIC in
  the kernel's integer arithmetic; RACK-TLP loss detection with PRR (tcp_recovery 1,
  tcp_early_retrans 3).
- ``ns3``: ns-3 3.44's choices (``bench/sim.py``): ssthresh halves pipe, an integer cwnd, the ACK
  that ends recovery also grows the window, new data on duplicate ACKs while pipe < cwnd, CUBIC in
  ns-3's port of the kernel's arithmetic.
"""

from __future__ import annotations

from hfcprov.sim.mac import CALIBRATED_TCP

LINUX = {"mss": 1448, "header_bytes": 52, **CALIBRATED_TCP, "count_acked": True, "cubic_arithmetic": "linux",
         "recovery": "rack"}
NS3 = {"ssthresh_from": "pipe", "integer_cwnd": True, "grow_on_recovery_exit": True, "limited_transmit": True,
       "cubic_arithmetic": "ns3"}
HOSTS = {"linux": LINUX, "ns3": NS3}
