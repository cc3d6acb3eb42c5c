#!/usr/bin/env bash
# The whole test suite: installs what it needs, builds, runs every test. `npm test` calls this.
set -euo pipefail
cd "$(dirname "$0")/.."

stage_start=0
stage() { stage_start=$(date +%s); echo "== $1"; }
stage_end() { echo "== $1 took $(( $(date +%s) - stage_start ))s"; }

# Everything below runs on the Node.js the box ships (image/printbox.conf), not the machine's own:
# native addons and the runtime's own behaviour (GC, finalizers) are what the box will meet.
stage "the box's Node.js"
PATH="$(scripts/box-node.sh)/bin:$PATH"
export PATH
node --version
stage_end "the box's Node.js"

stage "npm dependencies"
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund
fi
stage_end "npm dependencies"

stage "system packages for tests"
bash scripts/setup-test-deps.sh
stage_end "system packages for tests"

stage "build"
npm run build --silent
stage_end "build"

# The Raspberry Pi card is built while the tests below run: its build is mostly qemu-user running
# arm64 maintainer scripts, and the longest test files mostly wait on real timeouts, so the two
# share 2 cores well (docs/performance.md, "The whole test suite"). Its smoke boot comes last.
pi_card=0
[ "$(id -u)" -eq 0 ] && [ "$(uname -m)" = x86_64 ] && pi_card=1
pi_pid=""
pi_log=build/rpi-card-build.log
if [ "$pi_card" = 1 ]; then
  mkdir -p build
  echo "== Raspberry Pi card: building in the background (log: $pi_log)"
  # (at a lower priority: the tests' own timing comes first)
  nice -n 10 scripts/build-image.sh arm64 >"$pi_log" 2>&1 &
  pi_pid=$!
  # Never left running on its own: a build stopped in the middle leaves its chroot's mounts.
  trap '[ -n "$pi_pid" ] && { echo "waiting for the Raspberry Pi card build to end"; wait "$pi_pid" || true; }' EXIT
fi

stage "unit and integration tests"
# Two files at a time: most of their time is spent waiting on real timeouts (SNMP, sign-in delays,
# the server's intervals), not on CPU (docs/performance.md). The files that load the agent or the
# simulators on purpose (the short soaks, the hostile SNMP flood: their printers must answer within
# a real SNMP timeout beside it) run after the rest, one at a time.
alone=(dist/test/soak/soak-short.test.js dist/test/snmp/hostile.test.js)
for f in "${alone[@]}"; do [ -f "$f" ] || { echo "scripts/test.sh: $f is gone: update the list of files run alone" >&2; exit 1; }; done
mapfile -t files < <(find dist/test -name '*.test.js' | sort | grep -vxF -f <(printf '%s\n' "${alone[@]}"))
# A hung test fails after 5 minutes instead of eating CI's whole budget. No --test-force-exit: with
# it a file's last results can be lost on their way to the runner, and the run still exits 0
# (nodejs/node#64833: the file's pipe is not flushed before its process.exit). So every file closes
# what it opened, and each run is bounded instead, in case one does not.
timeout --kill-after=30s 30m node --test --test-reporter=spec --test-timeout=300000 --test-concurrency=2 "${files[@]}"
stage_end "unit and integration tests"

stage "files run alone (soaks, hostile SNMP)"
timeout --kill-after=30s 20m node --test --test-reporter=spec --test-timeout=300000 --test-concurrency=1 "${alone[@]}"
stage_end "files run alone (soaks, hostile SNMP)"

if [ -x scripts/boot-test.sh ]; then
  stage "appliance boot test"
  scripts/boot-test.sh
  stage_end "appliance boot test"
fi

# The Raspberry Pi card: built (arm64 maintainer scripts under qemu-user, started above) and
# smoke-booted under qemu-system-aarch64 -M virt.
stage "Raspberry Pi card: build and smoke boot"
if [ "$pi_card" = 1 ]; then
  pi_status=0
  wait "$pi_pid" || pi_status=$?
  pi_pid=""
  cat "$pi_log"
  [ "$pi_status" = 0 ] || { echo "the Raspberry Pi card build failed ($pi_status)"; exit 1; }
  scripts/image/smoke-arm64.sh
else
  echo "Raspberry Pi card skipped: building it needs root on an x86_64 host"
fi
stage_end "Raspberry Pi card: build and smoke boot"
