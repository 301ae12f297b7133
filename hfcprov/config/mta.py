"""PacketCable MTA config files: their framing (delimiters, TLV 64, configuration hash) is
``hfcprov.config.framing``'s; these are its public names under the module callers know."""

from hfcprov.config.framing import HASH_OIDS, config_hash, decode_mta, encode_mta, is_mta, verify_mta

__all__ = ["is_mta", "decode_mta", "encode_mta", "verify_mta", "config_hash", "HASH_OIDS"]
