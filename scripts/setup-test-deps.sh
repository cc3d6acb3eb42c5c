#!/usr/bin/env bash
# Installs the Debian packages the tests use, when missing (CI runs as root on a fresh machine).
set -euo pipefail
need=()
command -v snmpsimd >/dev/null 2>&1 || command -v snmpsimd.py >/dev/null 2>&1 || need+=(snmpsim)
command -v snmpget >/dev/null 2>&1 || need+=(snmp)
# The browser test of the sign-in page (test/api/login-browser.test.ts) drives Debian's Chromium.
[ -x /usr/bin/chromium ] || need+=(chromium)
command -v curl >/dev/null 2>&1 || need+=(curl)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "missing Debian packages: ${need[*]} (run as root to install them)" >&2
    exit 1
  fi
  apt-get -o DPkg::Lock::Timeout=600 update -qq
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${need[@]}"
fi
