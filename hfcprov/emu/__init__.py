"""Emulated cable modem in Linux network namespaces (root): topology, queues, impairments, boot."""
