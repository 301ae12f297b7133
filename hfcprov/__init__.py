"""hfcprov: a toolkit for DOCSIS/HFC cable networks.

Config files (``hfcprov.config``), service tiers and bulk builds (``hfcprov.tiers``),
TFTP and SNMP provisioning (``hfcprov.tftp``, ``hfcprov.snmp``), measurement
(``hfcprov.probe``, ``hfcprov.emu``), prediction (``hfcprov.sim``) and lab
campaigns (``hfcprov.lab``). See docs/architecture.md for how data flows.
"""

__version__ = "0.1.0"
