"""Plant loss on a link: independent (Bernoulli) or bursty (Gilbert-Elliott).

Cohen and Ramanathan apply loss separately to downstream data and upstream
ACKs; a ``Link`` holds one of these for its direction. Each model draws from
its own ``random.Random`` so adding probes or flows does not shift its losses.
"""

from __future__ import annotations

import random


class NoLoss:
    __slots__ = ()
    rate = 0.0

    def lost(self) -> bool:
        return False


class Bernoulli:
    """Each packet is lost independently with probability ``rate``."""

    __slots__ = ("rand", "rate")

    def __init__(self, rate: float, rng: random.Random) -> None:
        self.rate = rate
        self.rand = rng.random

    def lost(self) -> bool:
        return self.rand() < self.rate


class GilbertElliott:
    """Two-state Markov loss: Good loses with ``loss_good``, Bad with ``loss_bad``.

    Built from the figures an operator knows: the mean loss ``rate`` and the
    mean burst length in packets (``burst``); then Bad always loses, Good never,
    ``p_bg = 1/burst`` and ``p_gb = rate * p_bg / (1 - rate)`` give that mean.
    """

    __slots__ = ("bad", "loss_bad", "loss_good", "p_bg", "p_gb", "rand", "rate")

    def __init__(self, rate: float, burst: float, rng: random.Random,
                 loss_good: float = 0.0, loss_bad: float = 1.0) -> None:
        if not 0 <= rate < 1:
            raise ValueError("Gilbert-Elliott loss rate must be in [0, 1)")
        self.rate = rate
        self.p_bg = 1.0 / max(burst, 1.0)
        self.p_gb = rate * self.p_bg / (1.0 - rate) if rate else 0.0
        self.loss_good = loss_good
        self.loss_bad = loss_bad
        self.rand = rng.random
        self.bad = self.rand() < rate  # start in the stationary distribution

    def lost(self) -> bool:
        r = self.rand
        if self.bad:
            if r() < self.p_bg:
                self.bad = False
        elif r() < self.p_gb:
            self.bad = True
        p = self.loss_bad if self.bad else self.loss_good
        return p >= 1.0 or (p > 0.0 and r() < p)


def make_loss(model: str, rate: float, burst: float, rng: random.Random):
    if model == "none" or rate <= 0:
        return NoLoss()
    if model == "bernoulli":
        return Bernoulli(rate, rng)
    if model == "gilbert":
        return GilbertElliott(rate, burst, rng)
    raise ValueError(f"unknown loss model {model!r}")
