"""What this kernel and host offer for delay and loss, detected, not assumed.

Some kernels (this project's CI machine included) are built without the
``netem`` qdisc. The emulator then delays packets in a userspace TUN delay line
inside the modem namespace, and drops them randomly with ``nft numgen`` or
``iptables -m statistic`` when those tools exist, else in the delay line itself.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass

from hfcprov.emu import netns

# Ways to drop packets at random, best first: netem in the qdisc; nft or iptables rules on the
# CMTS's forward path; last, the userspace delay line.
LOSS_METHODS = ("netem", "nft-numgen", "iptables-statistic", "tun-delayline")


@dataclass(frozen=True)
class Capabilities:
    netem: bool  # tc qdisc netem is accepted by the kernel
    tun: bool  # /dev/net/tun exists (userspace delay line possible)
    nft: bool  # nft binary present
    iptables: bool  # iptables binary present and the statistic match known to the kernel

    @property
    def delay_method(self) -> str:
        if self.netem:
            return "netem"
        if self.tun:
            return "tun-delayline"
        return "none"

    def loss_methods(self) -> list[str]:
        """The loss methods this host offers, best first."""
        have = {"netem": self.netem, "nft-numgen": self.nft, "iptables-statistic": self.iptables,
                "tun-delayline": self.tun}
        return [m for m in LOSS_METHODS if have[m]]

    @property
    def loss_method(self) -> str:
        return next(iter(self.loss_methods()), "none")

    def describe(self, loss_method: str | None = None) -> str:
        """The methods in use; ``loss_method`` is a forced one (``Impairments.loss_method``)."""
        return f"delay: {self.delay_method}, loss: {loss_method or self.loss_method}"


def detect(scratch_ns: str) -> Capabilities:
    """Probe the kernel inside ``scratch_ns`` (an existing namespace; left as found)."""
    netns.run(["tc", "qdisc", "add", "dev", "lo", "root", "handle", "1:", "netem", "delay", "1ms"],
              ns=scratch_ns, check=False)
    qdiscs = netns.run(["tc", "qdisc", "show", "dev", "lo"], ns=scratch_ns, check=False)
    netem = "netem" in qdiscs
    if netem:
        netns.run(["tc", "qdisc", "del", "dev", "lo", "root"], ns=scratch_ns, check=False)
    iptables = bool(_which("iptables")) and _statistic_match_known()
    return Capabilities(netem=netem, tun=os.path.exists("/dev/net/tun"), nft=bool(_which("nft")), iptables=iptables)


def _which(binary: str) -> str | None:
    return shutil.which(binary) or next(
        (p for p in (f"/usr/sbin/{binary}", f"/sbin/{binary}") if os.path.exists(p)), None)


def _statistic_match_known() -> bool:
    try:
        with open("/proc/net/ip_tables_matches") as f:
            return "statistic" in f.read().split()
    except OSError:
        return True  # module not loaded yet; iptables loads it on first use
