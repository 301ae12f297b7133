"""The click root of ``hfcprov``: the group, its options, and the domains' commands.

Each domain has its own module here exposing one click command or group; they are imported only
when used, so ``hfcprov config decode`` does not pay for pysnmp, scapy or matplotlib. ``run`` turns
click's own outcomes (usage errors, --help, aborts) into their messages and exit statuses; the
package's ``finish`` handles everything else (hfcprov.cli).
"""

from __future__ import annotations

import importlib
import sys

import click

from hfcprov import __version__
from hfcprov.cli import set_verbosity, shortcut

# command name -> "module:attribute" of a click command/group
COMMANDS = {
    "config": ("hfcprov.cli.config_cmd:config", "Encode, decode, verify and diff DOCSIS config files."),
    "build": ("hfcprov.cli.build_cmd:build", "Build one config file per modem from a tier template and an inventory."),
    "buffer": ("hfcprov.cli.build_cmd:buffer", "Buffer Control sizing: advice and predicted latency/throughput tables."),
    "tcp": ("hfcprov.cli.build_cmd:tcp", "TCP tuning rules for HFC paths (socket-buffer sizing)."),
    "tftp": ("hfcprov.cli.tftp_cmd:tftp", "Serve config files to modems over TFTP."),
    "dhcp": ("hfcprov.cli.dhcp_cmd:dhcp", "Kea DHCP reservations for the inventory's modems."),
    "tod": ("hfcprov.cli.tod_cmd:tod", "Time of Day server (RFC 868) for booting modems."),
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

    def resolve_command(self, ctx, args):
        # click suggests from the commands it holds; a lazy group holds none until one is asked for
        if args and not args[0].startswith("-") and self.get_command(ctx, args[0]) is None:
            from hfcprov.suggest import close_names

            close = close_names(args[0], self.list_commands(ctx), n=1)
            ctx.fail(f"No such command {args[0]!r}." + (f" Did you mean {close[0]!r}?" if close else ""))
        return super().resolve_command(ctx, args)

    def format_commands(self, ctx, formatter):
        rows = [(name, help_) for name, (target, help_) in COMMANDS.items() if _importable(target)]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(sorted(rows))


def _importable(target: str) -> bool:
    import importlib.util  # only for listing commands (--help): ~3 ms a per-file call need not pay

    return importlib.util.find_spec(target.split(":")[0]) is not None


EXIT_CODES = """\b
Exit status: one meaning each, for every command
  0    everything asked for was done
  1    an error: bad input, a file that cannot be read or written, a damaged database
       (one line on stderr says what and where; nothing half-written is left)
  2    bad usage: an unknown option or command, a missing argument, a bad option value
  3    some rows, points or modems failed (`build`, `campaign run`, `snmp audit/reset/
       upgrade/get`); each is named, the others are done
  4    compared and found different: `snmp audit` modems out of sync (drift),
       `config diff` files that differ
  130  interrupted (Ctrl-C)"""


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]}, epilog=EXIT_CODES)
@click.version_option(__version__, prog_name="hfcprov")
@click.option("-v", "--verbose", count=True, help="More detail; with an error, also its traceback.")
@click.option("-q", "--quiet", is_flag=True, help="Only results and errors: no progress, no notes.")
@shortcut.runs(set_verbosity)
def cli(verbose, quiet):
    """hfcprov: DOCSIS/HFC config files, provisioning, measurement and simulation."""


def run(args: list[str]):
    """The click root on ``args``: what the command returns, or click's message and exit status."""
    try:
        return cli.main(args=args, prog_name="hfcprov", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("hfcprov: aborted", err=True)
        sys.exit(130)
    except click.UsageError as err:
        # one line, as every other error: what was wrong, and where to read how it is used
        where = f" (see '{err.ctx.command_path} --help')" if err.ctx is not None else ""
        click.echo(f"hfcprov: usage error: {_message(err)}{where}", err=True)
        sys.exit(err.exit_code)
    except click.ClickException as err:
        err.show()
        sys.exit(err.exit_code)
    except click.exceptions.Exit as err:
        sys.exit(err.exit_code)


def _message(err: click.UsageError) -> str:
    """Click's message; an unknown option's hint by hfcprov's one did-you-mean rule (hfcprov.suggest)."""
    if isinstance(err, click.NoSuchOption) and err.ctx is not None:
        from hfcprov.suggest import close_names

        known = [o for p in err.ctx.command.get_params(err.ctx) for o in (*p.opts, *p.secondary_opts)
                 if o.startswith("--")]
        close = close_names(err.option_name, known)
        hint = f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
        return f"No such option {err.option_name!r}.{hint}"
    return err.format_message()
