"""Measure a path: probe RTT (idle and under load) and TCP goodput, into ``RunResult``."""
