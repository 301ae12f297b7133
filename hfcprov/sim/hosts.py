"""End-host presets: the ``TcpOptions`` that make a simulated host behave like a named TCP stack.

Where the RFCs leave a choice, stacks differ, and the simulator follows whichever stack a
comparison is against. A preset is a plain mapping of ``TcpOptions`` fields; a scenario names
one as ``tcp: {host: linux}`` (the other ``tcp`` keys given beside it win).

- ``linux``: the kernel TCP the emulated modem's hosts run (6.x, as measured by
  ``bench/sim_vs_emu.py``): 1448-byte segments behind 52 bytes of IP/TCP headers with timestamps;
  200 ms minimum RTO kept above srtt and a 40 ms delayed ACK (``hfcprov.sim.mac.CALIBRATED_TCP``,
  the hosts the MAC was calibrated with); window growth by the segments each ACK covers; CUBIC in
  the kernel's integer arithmetic; RACK-TLP loss detection with PRR (tcp_recovery 1,
  tcp_early_retrans 3); new data in TSO-sized chunks (``tso_defer``: TCP always builds GSO packets,
  so with offloads off a 40 Mb/s flow on delayed ACKs still sends 3-4 segments every other ACK); the
  receiver's immediate ACKs (``quickack``, ``hfcprov.sim.tcp.LinuxAckState``): quick-ACK mode
  (``tcp_incr_quickack``, 16 ACKs) at the first data segment, after a pause longer than its RTO and on a
  spurious retransmission, and one ACK per segment while autotuning grows its window
  (``tcp_grow_window``, ``tcp_rcv_space_adjust``), so through slow start (captures at the bed's server:
  81-91% single-segment ACKs before the first loss, where other hosts ACK pairs); congestion control's RTT
  sample from the newest segment an ACK covers (``ca_rtt``: Linux's ``ca_rtt_us``, what CUBIC's HyStart
  sees), srtt's from the oldest; a loss halves cwnd, not the flight (``ssthresh_from: cwnd``: Reno's
  ``tcp_reno_ssthresh``, max(snd_cwnd / 2, 2); the flight is whole segments, cwnd also carries the growth
  since its last whole step, as Linux's ``snd_cwnd_cnt`` does, which halving the flight dropped: 0.6
  segment a loss at 1%); HyStart's rounds counted from the first ACK (``hystart_rounds: always``: Linux 6.14 on,
  ``hystart_update`` resets the round before its ``hystart_low_window`` check, commit 25c1a9ca53db), so each
  round starts at a flight's head; the receiver's first window as the bed's 6.18 sets it (``rcv_init_window``
  10 segments, ``tcp_select_initial_window``'s TCP_DEFAULT_INIT_RCVWND, growing by two segments a segment in
  ``tcp_grow_window`` to the clamp ``rcv_window_clamp`` of 80,480 bytes, ``tcp_rmem[1]`` at the measured
  len/truesize ratio 0.61), so it ACKs the first ~22 segments one by one (22 on the bed), which lets
  HyStart's ACK train end a 20 ms flow's slow start at ~31 segments as the kernel's does
  (docs/calibration.md section 10); PSH on the last segment of each of the sender's GSO packets of two
  or more segments and the receiver's immediate ACK of it (``push``: ``__tcp_transmit_skb`` marks them,
  ``tcp_measure_rcv_mss`` and ``tcp_cleanup_rbuf`` ACK them; it matches the bed's PSH marks and ACKs and
  brings the 1% loss rows to -3.5 / -3.7% of the pooled kernel runs, docs/calibration.md section 10).
- ``ns3``: ns-3 3.44's choices (``bench/sim.py``): ssthresh halves pipe, an integer cwnd, the ACK
  that ends recovery also grows the window, new data on duplicate ACKs while pipe < cwnd, CUBIC in
  ns-3's port of the kernel's arithmetic.
- ``docsis-ns3``: the TCP uploads of CableLabs' docsis-ns3 residential example (ns-3.41) as
  ``bench/docsis_ns3.py`` sets them: its TcpDctcp with alpha held at 1 is Linux Reno (growth by the
  segments each ACK covers, ssthresh half of cwnd), SACK with ns-3's classic recovery and limited
  transmit, no detection of a lost retransmission (the RTO finds it) and ns-3's loss-state exit
  (after an RTO the ACK that passes the recovery point grows nothing, so one segment waits for a
  delayed ACK), 1448-byte segments with timestamps, 1 s minimum RTO, delayed ACKs every second
  segment or 200 ms.
"""

from __future__ import annotations

from hfcprov.sim.mac import CALIBRATED_TCP

LINUX = {"mss": 1448, "header_bytes": 52, **CALIBRATED_TCP, "count_acked": True, "cubic_arithmetic": "linux",
         "recovery": "rack", "tso_defer": True, "quickack": True, "ca_rtt": "newest", "ssthresh_from": "cwnd",
         "hystart_rounds": "always", "rcv_init_window": 10, "rcv_window_clamp": 80480, "push": True}
NS3 = {"ssthresh_from": "pipe", "integer_cwnd": True, "grow_on_recovery_exit": True, "limited_transmit": True,
       "cubic_arithmetic": "ns3"}
DOCSIS_NS3 = {"variant": "sack", "mss": 1448, "header_bytes": 52, "initial_window": 10, "min_rto": 1.0,
              "delack_timeout": 0.2, "limited_transmit": True, "count_acked": True, "ssthresh_from": "cwnd",
              "grow_on_recovery_exit": True, "detect_lost_retransmit": False, "loss_exit_from_recover": True}
HOSTS = {"linux": LINUX, "ns3": NS3, "docsis-ns3": DOCSIS_NS3}
