#!/usr/bin/env bash
# Installs the Debian packages the tests use, when missing (CI runs as root on a fresh machine).
set -euo pipefail
need=()
command -v snmpsimd >/dev/null 2>&1 || command -v snmpsimd.py >/dev/null 2>&1 || need+=(snmpsim)
command -v snmpget >/dev/null 2>&1 || need+=(snmp)
# The browser test of the sign-in page (test/agent/api/login-browser.test.ts) drives Debian's Chromium.
[ -x /usr/bin/chromium ] || need+=(chromium)
command -v curl >/dev/null 2>&1 || need+=(curl)
# PrintMaster's own central server (../shared/tools/printmaster-server, test/kit/printmaster.ts) links libsqlite3.
[ -e /usr/lib/x86_64-linux-gnu/libsqlite3.so.0 ] || [ -e /lib/x86_64-linux-gnu/libsqlite3.so.0 ] || need+=(libsqlite3-0)
# A printer's own web page and IPP (shared/docs/lan-lab.md): CUPS's ippeveprinter.
command -v ippeveprinter >/dev/null 2>&1 || need+=(cups-ipp-utils)
# Each printer host of the namespace LAN runs its own D-Bus and Avahi (test/kit/printer-lan.ts).
command -v avahi-daemon >/dev/null 2>&1 || need+=(avahi-daemon)
command -v dbus-daemon >/dev/null 2>&1 || need+=(dbus)
# The site LAN's other hosts (test/kit/site-lan.ts): a Linux server answering SNMP (Net-SNMP's
# snmpd, which also made test/fixtures/snmp/linux-netsnmp.snmprec), a Windows-style
# WS-Discovery computer, a CUPS server sharing a queue (cupsd + lpadmin), Avahi's publish/browse tools.
command -v snmpd >/dev/null 2>&1 || need+=(snmpd)
command -v wsdd >/dev/null 2>&1 || need+=(wsdd)
command -v cupsd >/dev/null 2>&1 || need+=(cups-daemon cups-server-common cups-common)
command -v lpadmin >/dev/null 2>&1 || need+=(cups-client)
command -v avahi-publish >/dev/null 2>&1 || need+=(avahi-utils)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "missing Debian packages: ${need[*]} (run as root to install them)" >&2
    exit 1
  fi
  # Installed daemons are never started on this machine: an Avahi in the root namespace would
  # announce the machine on its real network. Tests start their own, inside namespaces.
  blocker=""
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    blocker=/usr/sbin/policy-rc.d
    printf '#!/bin/sh\nexit 101\n' >"$blocker" && chmod 755 "$blocker"
    trap 'rm -f "$blocker"' EXIT
  fi
  "$(dirname "$0")/apt-install.sh" "${need[@]}"
fi
