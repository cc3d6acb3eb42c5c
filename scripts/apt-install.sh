#!/usr/bin/env bash
# Installs Debian packages (as root), one installer at a time. `npm test` runs the image builds, the
# boot test and the boot test's second VM side by side, and each installs what it misses; apt-get
# does not wait for the package lists' lock (DPkg::Lock::Timeout covers dpkg's lock only), so two
# at once made one of them fail. This lock makes the second wait for the first.
#   scripts/apt-install.sh PACKAGE...
set -euo pipefail
[ $# -gt 0 ] || exit 0
exec 9>/var/lock/printbox-apt.lock
flock -w 1200 9 || { echo "scripts/apt-install.sh: another install held the lock for 20 minutes" >&2; exit 1; }
apt-get -o DPkg::Lock::Timeout=600 update -qq
DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "$@"
