#!/usr/bin/env bash
# Install the Debian packages hfcprov's tests and benchmarks use, as root.
#   scripts/debian-deps.sh            -> every package below
#   scripts/debian-deps.sh snmpd ...  -> just those
# atftpd is not in the list: it conflicts with tftpd-hpa (bench/tftp_bootstorm.py unpacks it separately).
# Services that a package would start on install (snmpd, tftpd-hpa, atftpd) are
# kept from starting: the tests start their own instances on their own ports.
set -euo pipefail
ALL=(iproute2 iptables nftables ethtool snmpd snmp tftp-hpa atftp tftpd-hpa iperf3 iputils-ping procps chromium)
pkgs=("$@")
[ ${#pkgs[@]} -gt 0 ] || pkgs=("${ALL[@]}")
if [ "$(id -u)" != 0 ]; then
  echo "debian-deps: needs root to install: ${pkgs[*]}" >&2
  exit 1
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
[ ${#missing[@]} -gt 0 ] || exit 0
policy=/usr/sbin/policy-rc.d
created_policy=0
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' > "$policy" && chmod +x "$policy" && created_policy=1
fi
trap '[ $created_policy = 1 ] && rm -f "$policy"' EXIT
export DEBIAN_FRONTEND=noninteractive
# A stale package list makes installs fail; refresh it at most once an hour.
stamp=/var/lib/apt/periodic/hfcprov-update-stamp
if [ ! -e "$stamp" ] || [ -n "$(find "$stamp" -mmin +60 2>/dev/null)" ]; then
  apt-get update -qq >/dev/null
  mkdir -p "$(dirname "$stamp")" && touch "$stamp"
fi
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# Packaged daemons may have been started by a maintainer script anyway: stop them.
for d in snmpd in.tftpd atftpd; do pkill -x "$d" 2>/dev/null || true; done
echo "debian-deps: installed ${missing[*]}"
