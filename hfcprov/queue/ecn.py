"""The IP header's ECN codepoints (RFC 3168) and the DSCP MULPI's default classifier sends to the low-latency queue.

The dual queue classifies and marks with these; the simulator's ECN plumbing
(``hfcprov.sim.aqm.ecn``) and the emulator's packet stage (``hfcprov.emu.aqmstage``)
write them into packets.
"""

NOT_ECT, ECT1, ECT0, CE = 0, 1, 2, 3  # the two ECN bits of the IPv4 TOS / IPv6 traffic class
DSCP_NQB = 45  # Non-Queue-Building traffic (the IETF NQB PHB): MULPI's default low-latency classifier takes it too

__all__ = ["CE", "DSCP_NQB", "ECT0", "ECT1", "NOT_ECT"]
