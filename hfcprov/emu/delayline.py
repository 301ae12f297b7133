"""A userspace delay line on a TUN device, for kernels without ``netem``.

Runs inside the modem namespace. Policy routing sends every packet the modem
forwards (home side to plant and back) into the TUN device; this process reads
it, holds it for the one-way delay, optionally drops it at random (plant loss),
and writes it back, whereupon the kernel routes it on to the shaped interface.
A constant delay keeps packets in order, so a FIFO suffices. Timing uses
``select`` with microsecond timeouts against the monotonic clock; a release is
scheduled from the arrival time, so late wake-ups never accumulate.

It runs SCHED_FIFO (it is the wire: a busy machine must not add its run-queue waits to the
emulated delay), notes how late each packet left against its due time, and answers its
counters on ``--control PATH`` (a UNIX datagram socket; ``hfcprov.emu.timekeeping``), so a
measurement can tell a plant that kept time from one that fell behind. Once the TUN device
and the control socket are open it prints one line, ``delayline: ready``, on stdout.

    python -m hfcprov.emu.delayline --dev dl0 --delay 0.02 [--loss 0.01 --seed 1]
        [--aqm pie --aqm-rate 10e6 --aqm-buffer 262144 --aqm-from 10.10.1.0/24 | --aqm-spec JSON]
        [--control /run/hfcprov-emu/LAB/delayline.sock]

With ``--aqm`` the packets from ``--aqm-from`` (the home side: upstream) first
pass a userspace AQM stage (``hfcprov.emu.aqmstage``: shaper + DOCSIS-PIE, the
LLD dual queue or drop-tail), then the delay. ``--aqm-spec`` (``StagePlan.spec``)
runs one such stage per upstream service flow, packets classified to their flow
by the modem's classifiers.
"""

from __future__ import annotations

import argparse
import collections
import fcntl
import ipaddress
import json
import os
import random
import select
import signal
import socket
import struct
import sys
import time

from hfcprov.emu.timekeeping import WIRE_PRIORITY, Timekeeping, raise_priority

TUNSETIFF = 0x400454CA
IFF_TUN = 0x0001
IFF_NO_PI = 0x1000


def open_tun(dev: str) -> int:
    fd = os.open("/dev/net/tun", os.O_RDWR | os.O_NONBLOCK)
    fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH", dev.encode(), IFF_TUN | IFF_NO_PI))
    return fd


def serve(fd: int, delay: float, loss: float = 0.0, seed: int | None = None, stage=None,
          stage_match=None, control: socket.socket | None = None, clock: Timekeeping | None = None) -> None:
    rng = random.Random(seed)
    queue: collections.deque[tuple[float, bytes]] = collections.deque()
    clock = clock or Timekeeping()
    watched = [fd] if control is None else [fd, control]
    while True:
        timeout = None if not queue else max(0.0, queue[0][0] - time.monotonic())
        if stage is not None:
            t = stage.next_time(time.monotonic())
            if t is not None:
                wait = max(0.0, t - time.monotonic())
                timeout = wait if timeout is None else min(timeout, wait)
        readable, _, _ = select.select(watched, [], [], timeout)
        if control is not None and control in readable:
            _answer(control, clock, stage)
        if fd in readable:
            while True:
                try:
                    pkt = os.read(fd, 65536)
                except BlockingIOError:
                    break
                now = time.monotonic()
                if loss and rng.random() < loss:
                    continue
                if stage is not None and stage_match(pkt) and stage.offer(pkt, now) is not None:
                    continue  # queued (or dropped) by its flow's stage; None: a flow tc shapes
                queue.append((now + delay, pkt))
        now = time.monotonic()
        if stage is not None:
            for pkt in stage.release(now):
                queue.append((now + delay, pkt))
        while queue and queue[0][0] <= now:
            due, pkt = queue.popleft()
            clock.written(now - due)
            try:
                os.write(fd, pkt)
            except OSError:
                clock.refused += 1  # e.g. a packet the kernel refuses now; drop it as a plant would


def _answer(control: socket.socket, clock: Timekeeping, stage) -> None:
    """Reply to each request waiting on the control socket with the timekeeping counters."""
    while True:
        try:
            _, peer = control.recvfrom(256)
        except (BlockingIOError, InterruptedError):
            return
        try:
            control.sendto(json.dumps(clock.as_dict(stage.live if stage is not None else ())).encode(), peer)
        except OSError:
            pass  # the asker went away


def _control_socket(path: str) -> socket.socket:
    try:
        os.unlink(path)  # a predecessor's, left by a kill
    except FileNotFoundError:
        pass
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(path)
    s.setblocking(False)
    return s


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="hfcprov.emu.delayline")
    ap.add_argument("--dev", required=True)
    ap.add_argument("--delay", type=float, required=True, help="one-way delay, seconds")
    ap.add_argument("--loss", type=float, default=0.0)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--aqm", choices=("droptail", "pie", "dualq"), default=None,
                    help="queue the --aqm-from packets in a userspace AQM stage first")
    ap.add_argument("--aqm-rate", type=float, default=None, help="the stage's rate, bits/s")
    ap.add_argument("--aqm-buffer", type=int, default=None, help="the stage's buffer, bytes")
    ap.add_argument("--aqm-burst", type=int, default=3044, help="the stage's token bucket, bytes")
    ap.add_argument("--aqm-target", type=float, default=None, help="AQM latency target, seconds")
    ap.add_argument("--aqm-from", default="0.0.0.0/0", help="IPv4 source prefix the stage takes")
    ap.add_argument("--aqm-spec", default=None, help="JSON: one stage per service flow (aqmstage.StagePlan.spec)")
    ap.add_argument("--control", default=None, help="UNIX datagram socket path answering the timekeeping counters")
    args = ap.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    # This process is the wire: on a busy machine, ordinary scheduling would add its run-queue
    # waits to every packet's delay. It sleeps in select, so it cannot hog a CPU.
    clock = Timekeeping(raise_priority(WIRE_PRIORITY))
    stage = match = None
    if args.aqm_spec:
        from hfcprov.emu.aqmstage import dispatch_from_spec, source_matcher

        spec = json.loads(args.aqm_spec)
        stage = dispatch_from_spec(spec, seed=args.seed or 0)
        match = source_matcher(ipaddress.ip_network(spec["from"], strict=False))
    elif args.aqm:
        from hfcprov.emu.aqmstage import AqmStage, FlowDispatch, source_matcher

        stage = FlowDispatch([AqmStage(args.aqm, args.aqm_rate, args.aqm_buffer, burst=args.aqm_burst,
                                       target=args.aqm_target, seed=args.seed or 0)])
        match = source_matcher(ipaddress.ip_network(args.aqm_from, strict=False))
    fd = open_tun(args.dev)
    control = _control_socket(args.control) if args.control else None
    print("delayline: ready", flush=True)
    try:
        serve(fd, args.delay, args.loss, args.seed, stage, match, control, clock)
    except KeyboardInterrupt:
        pass
    finally:
        if control is not None:
            control.close()
            try:
                os.unlink(args.control)
            except OSError:
                pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
