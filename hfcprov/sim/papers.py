"""White et al. (2011), "Right-sizing cable modem buffers": the figures their text states.

Paper data, not the model: ``hfcprov.sim.mac`` holds only the MAC. The buffer advisor quotes these
numbers to users (``hfcprov.tiers.advisor``); ``bench/white2011.py`` and ``bench/sim_mac.py`` fit
and score the MAC against them (with the implied points and the error measure, which stay there).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class WhitePoint:
    """One figure White et al. report in their text (Tests 1; Figures 4-8), upstream, one CM.

    ``goodput`` in bits/s (None where only the latency is reported); ``full`` marks
    points they describe as using the whole rate ("sufficient to utilize"), for which
    ``goodput`` is 95% of the rate; ``ping`` is their loaded PING latency in seconds.
    """

    rate: float
    buffer: int
    rtt: float
    flows: int
    goodput: float | None
    full: bool = False
    ping: float | None = None
    source: str = ""
    short: bool = False  # implied, not quoted: the text says this buffer was not enough for the rate

    @property
    def collapse(self) -> bool:
        """One of the four 10 Mb/s, 16 KiB points where the measured goodput collapses."""
        return self.rate == 10e6 and self.buffer == 16384 and not self.full


WHITE_2011_POINTS = (
    WhitePoint(1e6, 16384, 0.040, 1, 0.95e6, True, source="Fig. 4: 16 KiB sufficient at 1 Mb/s"),
    WhitePoint(1e6, 16384, 0.100, 1, 0.95e6, True, source="Fig. 4"),
    WhitePoint(2e6, 16384, 0.040, 1, 1.90e6, True, ping=0.05204, source="Fig. 4, Fig. 7: 52.04 ms"),
    WhitePoint(2e6, 16384, 0.100, 1, 1.90e6, True, source="Fig. 4"),
    WhitePoint(2e6, 65536, 0.040, 1, 1.90e6, True, ping=0.200, source="Fig. 7: 200 ms"),
    WhitePoint(2e6, 262144, 0.040, 1, 1.90e6, True, ping=1.01917, source="Fig. 7: 1019.17 ms"),
    WhitePoint(5e6, 65536, 0.100, 1, 4.75e6, True, source="Fig. 5: 64 KiB needed at 100 ms"),
    WhitePoint(10e6, 65536, 0.040, 1, 9.5e6, True, source="Fig. 5/6a: full 10 Mb/s"),
    WhitePoint(10e6, 262144, 0.100, 1, 9.5e6, True, source="Fig. 5: 256 KiB needed at 100 ms"),
    WhitePoint(10e6, 16384, 0.040, 1, 1.97e6, source="Fig. 6a"),
    WhitePoint(10e6, 16384, 0.100, 1, 1.65e6, source="Fig. 6b: 4.95 / 3"),
    WhitePoint(10e6, 65536, 0.100, 1, 6.05e6, source="Fig. 6b"),
    WhitePoint(10e6, 16384, 0.040, 10, 7.11e6, source="Fig. 6a"),
    WhitePoint(10e6, 65536, 0.040, 10, 9.5e6, True, source="Fig. 6a: full"),
    WhitePoint(10e6, 16384, 0.100, 10, 4.95e6, source="Fig. 6b"),
    WhitePoint(10e6, 65536, 0.100, 10, 8.77e6, source="Fig. 6b"),
)
