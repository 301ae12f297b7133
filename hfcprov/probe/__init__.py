"""Measure a path: probe RTT (idle and under load) and TCP goodput, into ``RunResult``."""

# The responder's port (UDP echo and TCP bulk): not iperf3's 5201, irtt's 2112 or netperf's 12865,
# so an hfcprov responder runs beside them on one server.
DEFAULT_PORT = 7473
