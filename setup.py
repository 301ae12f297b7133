"""Packaging beyond setup.cfg: the shipped data folders.

The top-level ``templates/`` and ``mibs/`` are the sources users edit. A wheel carries them inside
the package as ``hfcprov/templates`` and ``hfcprov/mibs`` (``hfcprov.shipped`` finds either): two
data-only packages mapped onto those folders, so nothing is kept twice in the repository. Their
files are listed under [options.package_data] in setup.cfg.
"""

from setuptools import find_packages, setup

DATA = {"hfcprov.templates": "templates", "hfcprov.mibs": "mibs"}

setup(packages=find_packages(include=["hfcprov", "hfcprov.*"]) + list(DATA), package_dir=DATA)
