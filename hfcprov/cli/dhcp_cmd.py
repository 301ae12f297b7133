"""``hfcprov dhcp export``: Kea host reservations for every modem of an inventory."""

from __future__ import annotations

import json

import click

from hfcprov.cli.options import JSON, MKDIR

FORMATS = {"kea4": 4, "kea6": 6}


@click.group()
def dhcp():
    """DHCP for cable modems: Kea reservations from the inventory."""


@dhcp.command(epilog="""\b
The file name each modem is handed is --pattern filled from its row: give the same pattern
as `hfcprov build --pattern` and the dynamic TFTP server's `filename:`, and every modem asks
for the file the TFTP server has. Inventory columns read: mac, ip (kea4) or ipv6 (kea6),
subnet / subnet6 (where --subnet cannot tell), duid (kea6, optional).
\b
Examples:
  hfcprov dhcp export --format kea4 -i modems.csv --tftp-server 10.0.0.1 --subnet 10.1.0.0/16 -o kea-dhcp4.conf
  hfcprov dhcp export --format kea4 -i modems.csv --tftp-server 10.0.0.1 \\
      --control-socket /run/kea/kea4-ctrl-socket -o /etc/kea/kea-dhcp4.conf""")
@click.option("--format", "fmt", type=click.Choice(sorted(FORMATS)), required=True,
              help="kea4: Kea DHCPv4 (subnet4 reservations); kea6: Kea DHCPv6 (subnet6 reservations).")
@click.option("--inventory", "-i", required=True, type=click.Path(dir_okay=False), help="modems.csv or .yaml/.json")
@click.option("-o", "--output", "out", required=True, type=click.Path(dir_okay=False),
              help="The Kea config file to write (the base config with the reservations).")
@MKDIR
@click.option("--tftp-server", "tftp", multiple=True, required=True, metavar="ADDR",
              help="TFTP server (repeatable; next-server and 125.4491.2, or 17.4491.32 for kea6). Each format "
                   "takes the addresses of its own family.")
@click.option("--subnet", "subnets", multiple=True, metavar="PREFIX",
              help="Subnet for rows whose address no subnet of the base holds (repeatable; added if missing).")
@click.option("--pattern", default="{mac}.cm", show_default=True,
              help="Config file name from row fields (the same rule as `build --pattern`).")
@click.option("--time-server", "time", multiple=True, metavar="ADDR",
              help="RFC 868 time server (option 4 / 17.4491.37; default: the TFTP servers, see `tftp serve --tod`).")
@click.option("--log-server", "log", multiple=True, metavar="ADDR", help="Syslog server (option 7 / 17.4491.34).")
@click.option("--time-offset", default=0, show_default=True, type=click.IntRange(-86400, 86400),
              help="Seconds east of UTC (option 2 / 17.4491.38).")
@click.option("--router", "routers", multiple=True, metavar="ADDR", help="kea4: default router (option 3).")
@click.option("--mta-dhcp-server", "mta", multiple=True, metavar="ADDR",
              help="kea4: the eMTA's DHCP servers, option 122 sub-options 1 and 2 (at most two).")
@click.option("--base", type=click.Path(dir_okay=False),
              help="The operator's Kea config to add the reservations to (default: the running server's with "
                   "--control-socket, else a minimal one).")
@click.option("--control-socket", type=click.Path(dir_okay=True),
              help="Kea's UNIX control socket: apply the result to the running server (config-test, config-set), no restart.")
@click.option("--interface", "interfaces", multiple=True, help="New config only: interfaces Kea listens on (default *).")
@click.option("--lease-file", help="New config only: the memfile lease file (what `tftp serve` lease binding reads).")
@click.option("--check/--no-check", default=None,
              help="Check the result with kea-dhcp4/6 -t before writing it (default: when Kea is installed).")
@JSON("the summary")
def export(fmt, inventory, out, mkdir, tftp, subnets, pattern, time, log, time_offset, routers, mta, base, control_socket,
           interfaces, lease_file, check, as_json):
    """Write Kea host reservations for every modem in INVENTORY: address, boot file, TFTP and time servers."""
    from hfcprov.boot.dhcp import BootServers, DhcpExportError, kea_config, plan_reservations
    from hfcprov.boot.kea import KeaControl, check_config, find_kea, kea_version, read_config
    from hfcprov.fileio import atomic_write, output_folder

    output_folder(out, mkdir)
    family = FORMATS[fmt]
    if len(mta) > 2:
        raise click.UsageError("--mta-dhcp-server: option 122 has two (primary, secondary)")
    if mta and family == 6:
        raise click.UsageError("--mta-dhcp-server is DHCPv4 option 122 (kea4)")
    servers = BootServers(tuple(tftp), tuple(time) or None, tuple(log), time_offset, tuple(routers), tuple(mta))
    if not servers.of(family, "tftp"):
        raise DhcpExportError(f"--format {fmt} needs an IPv{family} --tftp-server")
    control = KeaControl(control_socket) if control_socket else None
    plan = plan_reservations(inventory, family, pattern)
    base_config = read_config(base) if base else control.config_get() if control else None
    version = control.version() if control else kea_version(family)
    new = {"interfaces": interfaces or None, "lease_file": lease_file, "control_socket": control_socket}
    config, summary = kea_config(plan, family, servers, base=base_config, subnets=subnets,
                                 kea_version=version or (2, 2, 0), **({} if base_config is not None else new))
    checked = False
    if check or (check is None and find_kea(family)):
        check_config(config, family)  # before anything is written or applied
        checked = True
    if control:
        control.config_test(config)
    atomic_write(out, json.dumps(config, indent=2) + "\n")
    if control:
        control.config_set(config)
    result = {"file": out, "format": fmt, "reservations": summary.reservations, "subnets_added": summary.subnets_added,
              "replaced": summary.replaced, "removed": summary.removed, "checked": checked,
              "applied": control_socket if control else None}
    if as_json:
        click.echo(json.dumps(result, indent=2))
        return
    notes = []
    if summary.subnets_added:
        notes.append(f"added subnet {', '.join(summary.subnets_added)}")
    if summary.replaced:
        notes.append(f"replaced {summary.replaced} hand-written reservation(s) of inventory modems")
    if summary.removed:
        notes.append(f"removed {summary.removed} reservation(s) of modems no longer in the inventory")
    notes.append(f"checked by kea-dhcp{family} -t" if checked else "not checked (--no-check)" if check is False
                 else f"not checked (kea-dhcp{family} not installed)")
    if control:
        notes.append(f"applied to the running server through {control_socket} (config-set)")
    click.echo(f"wrote {out}: {summary.reservations} {fmt} reservations; " + "; ".join(notes))

