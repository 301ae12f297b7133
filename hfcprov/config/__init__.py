"""DOCSIS config files: the TLV dictionary, the tree, the binary codec with MICs, and the
text (``Main { ... }``), YAML and JSON forms.

    tree = read_config("examples/buffer-control.cfg")       # text, YAML, JSON or binary
    data = encode(tree, secret=b"shared")                   # CM MIC, CMTS MIC, 0xFF, padding
    assert encode(decode(data)) == data                     # byte for byte
    prepare(content_items(tree.tlvs), b"shared", holes=(19, 20)).fill({19: 1700000000, 20: "10.0.0.9"})
    decode(data).warnings                                   # lenient: odd fields kept raw, named here
    encode_mta(read_config("voice.cfg"), hash="na")         # PacketCable MTA file with its config hash
    [sf.target_buffer for sf in service_flows(tree)]        # hfcprov.model
"""

from hfcprov.config.ber import VarBind
from hfcprov.config.codec import content_items, decode, encode, read_secret
from hfcprov.config.dictionary import ROOT, Spec, lookup
from hfcprov.config.errors import ConfigError
from hfcprov.config.framing import PreparedFile, decode_mta, encode_mta, prepare, verify, verify_cm_mic, verify_mta
from hfcprov.config.forms import parse_any, parse_json, parse_yaml, read_config, render_json, render_yaml
from hfcprov.config.text import encode_text, parse_text, render_text, text_items
from hfcprov.config.tree import ConfigTree, Layout, Tlv

__all__ = [
    "ConfigTree", "Tlv", "Layout", "ConfigError", "VarBind", "Spec", "ROOT", "lookup",
    "decode", "encode", "content_items", "prepare", "PreparedFile", "decode_mta", "encode_mta", "verify_mta", "verify", "verify_cm_mic", "read_secret", "parse_text", "encode_text", "text_items", "render_text",
    "read_config", "parse_yaml", "parse_json", "render_yaml", "render_json", "parse_any",
]
