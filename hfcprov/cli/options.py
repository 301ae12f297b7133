"""Option declarations every command shares: one spelling, one help text, one default, one exit status.

- Quantities (``--rate 10M``, ``--rtt 40ms``, ``--cm-buffer 64KiB``) are click types over ``hfcprov.units``:
  a bad value is a usage error (exit status 2, as click's own ``--format xml``), naming the option.
- ``listen_option``: the one ``--listen HOST:PORT`` (or ``[IPV6]:PORT``) form of every server.
- ``JSON``, ``SECRET_FILE``, ``JOBS``: the options several commands take, declared once.
- ``MKDIR``: a command writes into a folder that exists; ``--mkdir`` creates it (``fileio.output_folder``).
"""

from __future__ import annotations

import click

from hfcprov.errors import UnitError
from hfcprov.units import parse_bytes, parse_duration, parse_host_port, parse_link_rate, parse_rtt


class Quantity(click.ParamType):
    """A quantity with its unit, parsed once at the edge (bits/s, bytes, seconds)."""

    def __init__(self, parse, name: str):
        self.parse, self.name = parse, name

    def convert(self, value, param, ctx):
        if not isinstance(value, str):
            return value  # already parsed (a default given as a number, or a second pass)
        try:
            return self.parse(value)
        except UnitError as err:
            self.fail(str(err), param, ctx)


class QuantityList(Quantity):
    """A comma list of quantities: ``1M,2M,5M``."""

    def convert(self, value, param, ctx):
        if not isinstance(value, str):
            return value
        items = [t.strip() for t in value.split(",") if t.strip()]
        if not items:
            self.fail("empty list", param, ctx)
        return [super(QuantityList, self).convert(t, param, ctx) for t in items]


RATE = Quantity(parse_link_rate, "rate")  # bits/s; under 1 kb/s refused ("did you mean 5M?")
SIZE = Quantity(parse_bytes, "size")  # bytes; K = KiB = 1024
DURATION = Quantity(parse_duration, "duration")  # seconds; a time needs its unit
RTT = Quantity(parse_rtt, "rtt")  # seconds; over 10 s refused ("did you mean 40ms?")
RATES, SIZES, RTTS = QuantityList(parse_link_rate, "rates"), QuantityList(parse_bytes, "sizes"), \
    QuantityList(parse_rtt, "rtts")


class ListenAddress(click.ParamType):
    """``HOST:PORT``, ``[IPV6]:PORT``, ``HOST`` or ``:PORT`` -> (host, port); port 0: any free port."""

    name = "HOST:PORT"

    def __init__(self, default_port: int, default_host: str = "0.0.0.0"):
        self.default_port, self.default_host = default_port, default_host

    def convert(self, value, param, ctx):
        if isinstance(value, tuple):
            return value
        try:
            return parse_host_port(value, self.default_port, default_host=self.default_host, any_port=True)
        except UnitError as err:
            self.fail(str(err), param, ctx)


def listen_option(default_port: int, what: str, default_host: str = "0.0.0.0"):
    """The ``--listen`` option of a server (``tftp serve``, ``probe responder``, ``snmp demo-agent``...):
    the value reaches the command as ``(host, port)``."""
    return click.option("--listen", type=ListenAddress(default_port, default_host),
                        default=f"[{default_host}]:{default_port}" if ":" in default_host
                        else f"{default_host}:{default_port}", show_default=True,
                        help=f"HOST:PORT or [IPV6]:PORT to listen on for {what} ([::]: IPv4 and IPv6; "
                             f"port 0: any free port).")


def JSON(what: str):  # noqa: N802 - reads as the constant it stands for
    """``--json``: the same result on stdout as JSON, with the names and units of the table."""
    return click.option("--json", "as_json", is_flag=True,
                        help=f"Print {what} as JSON on stdout (for scripts).")


SECRET_FILE = click.option("--secret-file", type=click.Path(dir_okay=False),
                           help="File whose first line is the CMTS shared secret (the CMTS MIC); never logged.")

# One default everywhere: one worker process per CPU (a campaign file's `jobs:` key overrides it).
JOBS = click.option("--jobs", "-j", type=click.IntRange(1, 256), default=None,
                    help="Worker processes (default: one per CPU).")


MKDIR = click.option("--mkdir", is_flag=True,
                     help="Create the output's folder if it does not exist (else a missing folder is an error: "
                          "a typo must not grow a new tree).")


# the spelling before modem profiles: "3.0" / "3.1" name the profile of that DOCSIS version (queue.profile.parse_profile)
OLD_DOCSIS_VERSION = click.option("--docsis-version", type=click.Choice(["3.0", "3.1"]), default=None, hidden=True,
                                  help="Old spelling: the profile of that DOCSIS version (docsis3.0-4ch, docsis3.1).")
