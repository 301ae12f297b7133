"""Voice codecs as the E-model and the stream generator see them (``Scenario.voice.codec`` names)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Codec:
    """A voice codec as the E-model sees it, and as the stream generator sends it."""

    name: str
    ie: float  # equipment impairment factor with no loss
    bpl: float  # packet-loss robustness factor
    payload_bytes: int  # voice bytes per packet
    interval: float  # seconds between packets (packetisation time)
    header_bytes: int = 40  # IP + UDP + RTP

    @property
    def packet_bytes(self) -> int:
        return self.payload_bytes + self.header_bytes

    @property
    def rate_bps(self) -> float:
        return self.packet_bytes * 8 / self.interval


# G.711 mu-law, 20 ms packets, with packet-loss concealment (G.113 Appendix I).
G711 = Codec("G.711", ie=0.0, bpl=25.1, payload_bytes=160, interval=0.020)

# Scenario.voice.codec -> Codec
CODECS = {"g711": G711}
