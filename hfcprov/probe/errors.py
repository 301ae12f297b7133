from hfcprov.errors import HfcprovError


class ProbeError(HfcprovError):
    """A measurement could not be made as asked (bad target, unknown congestion control, no responder)."""
