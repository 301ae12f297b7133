"""The ``hfcprov`` command: a thin shell over the library.

Each domain has its own module here exposing one click command or group; they
are imported only when used, so ``hfcprov config decode`` does not pay for
pysnmp, scapy or matplotlib. Library errors (``HfcprovError``) become one line
on stderr and exit status 1; nothing else is caught.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys

import click

from hfcprov import __version__
from hfcprov.errors import HfcprovError

# command name -> "module:attribute" of a click command/group
COMMANDS = {
    "config": ("hfcprov.cli.config_cmd:config", "Encode, decode, verify and diff DOCSIS config files."),
    "build": ("hfcprov.cli.build_cmd:build", "Build one config file per modem from a tier template and an inventory."),
    "buffer": ("hfcprov.cli.build_cmd:buffer", "Buffer Control sizing: advice and predicted latency/throughput tables."),
    "tcp": ("hfcprov.cli.build_cmd:tcp", "TCP tuning rules for HFC paths (socket-buffer sizing)."),
    "tftp": ("hfcprov.cli.tftp_cmd:tftp", "Serve config files to modems over TFTP."),
    "snmp": ("hfcprov.cli.snmp_cmd:snmp", "Audit, reset and list modems over SNMP."),
    "sim": ("hfcprov.cli.sim_cmd:sim", "Simulate a service flow carrying TCP and probe traffic."),
    "emu": ("hfcprov.cli.emu_cmd:emu", "Emulated cable modem in Linux network namespaces (root)."),
    "probe": ("hfcprov.cli.probe_cmd:probe", "Measure latency under load and TCP throughput on a path."),
    "campaign": ("hfcprov.cli.campaign_cmd:campaign", "Run, resume and report lab campaigns."),
}


class LazyGroup(click.Group):
    def list_commands(self, ctx):
        return sorted(name for name, (target, _) in COMMANDS.items() if _importable(target))

    def get_command(self, ctx, name):
        if name not in COMMANDS:
            return None
        target, _ = COMMANDS[name]
        module_name, attr = target.split(":")
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as err:
            if err.name == module_name:
                return None  # that domain is not built yet
            raise
        return getattr(module, attr)

    def format_commands(self, ctx, formatter):
        rows = [(name, help_) for name, (target, help_) in COMMANDS.items() if _importable(target)]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(sorted(rows))


def _importable(target: str) -> bool:
    return importlib.util.find_spec(target.split(":")[0]) is not None


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="hfcprov")
def cli():
    """hfcprov: DOCSIS/HFC config files, provisioning, measurement and simulation."""


def main(argv=None):
    try:
        # A command may return its exit status (e.g. 2 = modems out of sync); other return values mean 0.
        status = cli.main(args=argv, prog_name="hfcprov", standalone_mode=False)
    except HfcprovError as err:
        click.echo(f"hfcprov: error: {err}", err=True)
        sys.exit(1)
    except click.exceptions.Abort:
        click.echo("hfcprov: aborted", err=True)
        sys.exit(130)
    except click.ClickException as err:
        err.show()
        sys.exit(err.exit_code)
    except click.exceptions.Exit as err:
        sys.exit(err.exit_code)
    except KeyboardInterrupt:
        click.echo("hfcprov: interrupted", err=True)
        sys.exit(130)
    except BrokenPipeError:
        sys.exit(1)
    sys.exit(status if isinstance(status, int) and not isinstance(status, bool) else 0)
