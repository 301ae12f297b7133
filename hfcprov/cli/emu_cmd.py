"""``hfcprov emu``: the emulated cable modem (root)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from hfcprov.cli.options import JSON, OLD_DOCSIS_VERSION, RTT
from hfcprov.emu.caps import LOSS_METHODS
from hfcprov.units import format_bytes, format_duration, format_rate


@click.group()
def emu():
    """Emulated cable modem in network namespaces: cpe - cm - cmts - server."""


@emu.command()
@click.option("--rtt", type=RTT, default="0ms", show_default=True, help="Added round-trip delay (plant + Internet).")
@click.option("--loss", default=0.0, show_default=True, help="Random loss per direction, as a fraction.")
@click.option("--seed", type=int, default=None, help="Seed of the random loss.")
@click.option("--loss-method", type=click.Choice(LOSS_METHODS), default=None,
              help="Force how loss is made (default: the first this host offers, in this order).")
@click.option("--config", "config", type=click.Path(exists=True, dir_okay=False),
              help="Config file (binary .cm, text, YAML or JSON) the modem boots from over TFTP.")
@click.option("--tftp-root", type=click.Path(exists=True, file_okay=False),
              help="Serve this folder instead; --file names the file the modem asks for.")
@click.option("--file", "filename", help="Config file name the modem requests (with --tftp-root).")
@click.option("--dynamic", type=click.Path(exists=True, dir_okay=False), help="Dynamic TFTP provider YAML.")
@click.option("--prefix", default="hfemu-", show_default=True, help="Name prefix of the lab's namespaces.")
@click.option("--profile", default=None, metavar="PROFILE",
              help="The modem profile (default docsis3.1, as `sim run --config`): its DOCSIS version decides the AQM: "
              "3.1 runs DOCSIS-PIE on upstream flows unless 24.40.1 / TLV 76 disable it; 3.0 and 2.0 are drop-tail "
              "unless the file's 24.40 asks for AQM. (The emulated modem shapes with tc: no request-grant MAC.)")
@OLD_DOCSIS_VERSION
@click.option("--ipv6", is_flag=True, help="The modem's management on IPv6 (fd00:10:2::2, CMTS fd00:10:2::1): it "
              "boots by TFTP over IPv6 (a dynamic file carries TLV 59) and answers SNMP there.")
@click.option("--headend", is_flag=True, help="Boot as a cable modem: DHCP from Kea (reservations from the lab's "
              "inventory, relayed by the emulated CMTS), Time of Day, TFTP of the file DHCP names, then the CMTS's "
              "registration check (docs/emu.md).")
@click.option("--mac", default="0010950000e1", show_default=True, help="The modem's MAC (with --headend).")
@click.option("--cmts-secret-file", type=click.Path(exists=True, dir_okay=False),
              help="The emulated CMTS's shared secret (with --headend): a file without its CMTS MIC is refused.")
@JSON("the lab")
def up(rtt, loss, seed, loss_method, config, tftp_root, filename, dynamic, prefix, profile, docsis_version, ipv6,
       headend, mac, cmts_secret_file, as_json):
    """Build a lab; with --config/--tftp-root the modem boots from its file over TFTP."""
    from hfcprov.emu import topology

    if tftp_root and not filename and not headend:
        raise click.UsageError("--tftp-root needs --file (the name the modem requests), or --headend (DHCP names it)")
    chain = None
    if headend:
        from hfcprov import macaddr
        from hfcprov.emu.headend import Headend

        try:
            mac = macaddr.normalize(mac)
        except macaddr.MacAddressError as err:
            raise click.BadParameter(str(err), param_hint="--mac") from None
        chain = Headend(mac=mac, secret_file=cmts_secret_file, dynamic=dynamic)
        if config:
            filename = f"{mac}.cm"  # the name the lab's DHCP hands out (the headend's pattern)
    from hfcprov.queue.profile import parse_profile

    modem = parse_profile(profile or docsis_version)
    lab = topology.up(rtt=rtt, loss=float(loss), seed=seed, prefix=prefix, loss_method=loss_method,
                      docsis_version=modem.aqm_rule_version, ipv6=ipv6)
    applied = None
    try:
        if config:
            from hfcprov.config import encode, read_config

            root = lab.state_dir / "tftp"
            name = filename if chain else Path(config).with_suffix(".cm").name
            from hfcprov.fileio import atomic_write

            secret = None
            if chain and cmts_secret_file:
                from hfcprov.config import read_secret

                secret = read_secret(cmts_secret_file)
            atomic_write(root / name, encode(read_config(config), secret=secret))
            applied = lab.boot(root, name, dynamic=dynamic, headend=chain)
        elif tftp_root:
            applied = lab.boot(tftp_root, filename, dynamic=dynamic, headend=chain)
    except BaseException:
        lab.down()
        raise
    _show(lab, applied, as_json)


@emu.command()
@click.argument("names", nargs=-1)
@click.option("--all", "all_", is_flag=True, help="Every lab with the prefix, also after a crash.")
@click.option("--prefix", default="hfemu-", show_default=True)
def down(names, all_, prefix):
    """Remove labs: namespaces, helper processes, queues and state."""
    from hfcprov.emu import topology

    if all_:
        removed = topology.down_all(prefix)
    else:
        if not names:
            raise click.UsageError("name a lab, or use --all")
        topology.require_root()
        removed = []
        for name in names:
            try:
                topology.Lab.load(name).down()
            except topology.EmuError:
                topology.Lab(name=name).down()  # leftovers without state
            removed.append(name)
    for name in removed:
        click.echo(f"removed {name}")


@emu.command()
@click.argument("name", required=False)
@JSON("the lab (or every lab)")
def status(name, as_json):
    """Show one lab (or list all): impairment method, queues applied, modem boot state."""
    from hfcprov.emu import topology

    if not name:
        for n in topology.names():
            click.echo(n)
        return
    lab = topology.Lab.load(name)
    _show(lab, lab.applied(), as_json)


def _show(lab, applied, as_json):
    queues = (applied or {}).get("queues") or lab.queues
    if as_json:
        click.echo(json.dumps({"name": lab.name, "namespaces": {n: lab.ns(n) for n in ("cpe", "cm", "cmts", "srv")},
                               "methods": lab.caps.describe(lab.impairments.loss_method) if lab.caps else None,
                               "impairments": vars(lab.impairments), "queues": queues, "modem": applied,
                               "management": lab.addr("cm_rf")}, default=str))
        return
    imp = lab.impairments
    click.echo(f"{lab.name}: {lab.caps.describe(lab.impairments.loss_method) if lab.caps else 'unknown methods'}; "
               f"rtt +{format_duration(imp.rtt)}, loss {imp.loss:g}")
    for direction, q in sorted(queues.items()):
        for f in q.get("flows") or [q]:  # a state file from before classifiers has the primary only
            rate = format_rate(f["rate_bps"]) if f.get("rate_bps") else "no rate limit"
            which = f" flow {f.get('path') or f.get('ref')} ({f['classid']})" if "classid" in f else ""
            click.echo(f"  {direction}{which}: {rate}, buffer {format_bytes(f['buffer'])}, burst {f['burst']} B")
        for c in q.get("filters", []):
            click.echo(f"  {direction} classifier {c['classifier']} -> {c['flowid']} (tc prio {c['prio']})")
        if q.get("aqm"):
            click.echo(f"  {direction} AQM: {q['aqm']['stage']} stage, latency target "
                       f"{format_duration(q['aqm']['latency_target'])}")
    if applied:
        click.echo(f"  modem: {applied.get('status')}, file {applied.get('config_file')}, boots {applied.get('boots')}, "
                   f"management {lab.addr('cm_rf')}")
        if applied.get("reason"):
            click.echo(f"  why: {applied['reason']}")
        if applied.get("dhcp"):
            d = applied["dhcp"]
            click.echo(f"  boot chain: DHCPv{d['family']} lease {applied.get('address')}, file {d['file']} from "
                       f"{', '.join(d['tftp_servers'])}, time of day {'answered' if applied.get('tod') else 'none'}")
        for reason in applied.get("rejected", []):
            click.echo(f"  refused: {reason}")
