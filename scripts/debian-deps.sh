#!/usr/bin/env bash
# Install the Debian packages hfcprov's tests and benchmarks use, as root.
#   scripts/debian-deps.sh            -> every package below
#   scripts/debian-deps.sh snmpd ...  -> just those
# atftpd is not in the list: it conflicts with tftpd-hpa (bench/tftp_bootstorm.py unpacks it separately).
# Services that a package would start on install (snmpd, tftpd-hpa, atftpd, kea-dhcp4/6) are
# kept from starting: the tests start their own instances on their own ports.
# If a maintainer script starts one anyway, only that process is stopped: every
# process the install starts carries a token in its environment, and processes
# that ran before the install are never touched. A lab server's own snmpd or
# tftpd serving real modems is not ours to stop (nothing is stopped by name).
set -euo pipefail
ALL=(iproute2 iptables nftables ethtool snmpd snmp tftp-hpa atftp tftpd-hpa iperf3 iputils-ping procps chromium
     kea-dhcp4-server kea-dhcp6-server)
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
# What ran before the install: never stopped, whatever it carries.
before=" $(ls /proc | grep -E '^[0-9]+$' | tr '\n' ' ') "
token="HFCPROV_DEPS_INSTALL=$$.$(date +%s%N)"
env "$token" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# A daemon a maintainer script started anyway (policy-rc.d notwithstanding) inherited the token: stop it.
# Two passes: a process caught in exec() may show an empty environment for a moment.
for pass in 1 2; do
  for environ in /proc/[0-9]*/environ; do
    pid=${environ#/proc/}; pid=${pid%/environ}
    case "$before" in *" $pid "*) continue ;; esac
    # grep without -q reads to the end: an early exit would fail the pipe (pipefail) on tr's SIGPIPE
    if tr '\0' '\n' < "$environ" 2>/dev/null | grep -xF "$token" >/dev/null; then
      echo "debian-deps: stopping $(tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null)(pid $pid, started by this install)" >&2
      kill "$pid" 2>/dev/null || true
      before="$before$pid "
    fi
  done
  [ $pass = 2 ] || sleep 0.5
done
echo "debian-deps: installed ${missing[*]}"
