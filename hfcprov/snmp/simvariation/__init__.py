"""snmpsim variation modules of hfcprov (snmpsim runs them from this folder; nothing imports them)."""
