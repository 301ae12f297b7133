"""Tier templates, modem inventories and bulk builds (the sizing policy they call is ``hfcprov.queue``).

``load_inventory``, ``template_for`` and ``render_tree`` are the names other packages
(the TFTP server's dynamic files) code against.
"""

from hfcprov.tiers.bulk import template_for
from hfcprov.tiers.inventory import InventoryError, load_inventory
from hfcprov.tiers.templates import TemplateError, render_text, render_tree

__all__ = ["InventoryError", "TemplateError", "load_inventory", "render_text", "render_tree", "template_for"]
