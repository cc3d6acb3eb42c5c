#!/usr/bin/env bash
# The whole test suite: installs what it needs, builds, runs every test. `npm test` calls this.
# With a part, only that part runs (after the same set-up), the test tree's layout (test/layout.test.ts):
#   unit   the in-process tests (test/unit/, and the layout check)     npm run test:unit
#   agent  the tests against a running agent (test/agent/)             npm run test:agent
#   image  the image's files checked on this machine (test/image/)     npm run test:image
#   vm     the appliance boot test (scripts/boot-test.sh)              npm run test:vm
# (A part is one more word in the case below and its branch: e.g. the layer rules between src/ folders.)
set -euo pipefail
cd "$(dirname "$0")/.."
part=${1:-all}
case "$part" in
  all|unit|agent|image|vm) ;;
  *) echo "usage: scripts/test.sh [unit|agent|image|vm]  (no part: the whole suite)" >&2; exit 2 ;;
esac

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
scripts/npm-deps.sh
stage_end "npm dependencies"

stage "system packages for tests"
bash scripts/setup-test-deps.sh
stage_end "system packages for tests"

# The folders of src/ keep their layers (.dependency-cruiser.cjs, docs/architecture.md "Layers"):
# no import cycle, no import from a layer to a higher one. Seconds, so before anything long.
stage "layers"
npm run lint:layers --silent
stage_end "layers"

stage "build"
npm run build --silent
stage_end "build"

# The files that load the agent or the simulators on purpose (the short soaks, the hostile SNMP
# flood: their printers must answer within a real SNMP timeout beside it; the 5-minute
# announcement floods on the namespace LAN; the 10-minute run against PrintMaster's server, which
# counts readings a minute apart) run after the rest, two at a time in this order: the long run
# beside the hostile SNMP flood, then the floods and the soaks.
alone=(dist/test/agent/server/long-run.test.js dist/test/unit/snmp/hostile.test.js dist/test/agent/lan/hostile-floods.test.js dist/test/agent/soak/soak-short.test.js)
# The built card's files per board: part of the card's stage (scripts/image/smoke-arm64.sh runs it
# once the card is built), not of the unit stage, while the card is still being built.
card_files=(dist/test/vm/rpi-card.test.js)
for f in "${alone[@]}" "${card_files[@]}"; do [ -f "$f" ] || { echo "scripts/test.sh: $f is gone: update the list of files run alone" >&2; exit 1; }; done
# Two files at a time: most of their time is spent waiting on real timeouts (SNMP, sign-in delays,
# the server's intervals), not on CPU (docs/performance.md). A hung test fails after 5 minutes
# instead of eating CI's whole budget. No --test-force-exit: with it a file's last results can be
# lost on their way to the runner, and the run still exits 0 (nodejs/node#64833: the file's pipe is
# not flushed before its process.exit). So every file closes what it opened, and each run is
# bounded instead, in case one does not.
run_files() { timeout --kill-after=30s 30m node --test --test-reporter=spec --test-timeout=300000 --test-concurrency=2 "$@"; }
run_alone() { timeout --kill-after=30s 30m node --test --test-reporter=spec --test-timeout=900000 --test-concurrency=2 "$@"; }

# One part: its files (the files run alone among them last), or the boot test.
if [ "$part" != all ]; then
  stage "part: $part"
  case "$part" in
    unit) dirs=(dist/test/unit dist/test/layout.test.js) ;;
    agent) dirs=(dist/test/agent) ;;
    image) dirs=(dist/test/image) ;;
    vm) [ -x scripts/boot-test.sh ] || { echo "scripts/boot-test.sh is missing" >&2; exit 1; }
        scripts/boot-test.sh; stage_end "part: $part"; exit 0 ;;
  esac
  mapfile -t in_part < <(find "${dirs[@]}" -name '*.test.js' | sort)
  [ "${#in_part[@]}" -gt 0 ] || { echo "scripts/test.sh: no test files in ${dirs[*]}" >&2; exit 1; }
  mapfile -t files < <(printf '%s\n' "${in_part[@]}" | grep -vxF -f <(printf '%s\n' "${alone[@]}"))
  mapfile -t last < <(printf '%s\n' "${in_part[@]}" | grep -xF -f <(printf '%s\n' "${alone[@]}") || true)
  [ "${#files[@]}" = 0 ] || run_files "${files[@]}"
  [ "${#last[@]}" = 0 ] || run_alone "${last[@]}"
  stage_end "part: $part"
  exit 0
fi

# Nothing started in the background is left running on its own: a build stopped in the middle
# leaves its chroot's mounts, and the files run alone their simulators.
images_pid="" alone_pid="" card_pid="" part_pid=""
on_exit() {
  [ -z "$alone_pid" ] || { echo "waiting for the files run alone to end"; wait "$alone_pid" || true; cat "$alone_log"; }
  [ -z "$card_pid" ] || { echo "waiting for the card's smoke boot to end"; wait "$card_pid" || true; cat "$card_log"; }
  [ -z "$part_pid" ] || { echo "waiting for the boot test's second VM to end"; wait "$part_pid" || true; cat "$part_log"; }
  [ -z "$images_pid" ] || { echo "waiting for the image builds to end"; wait "$images_pid" || true; }
}
trap on_exit EXIT
# Both images are built while the tests below run, one after the other: the amd64 disk first (the
# boot test needs it as soon as the tests end), then the Raspberry Pi card. Their builds are mostly
# mmdebstrap and, for the card, qemu-user running arm64 maintainer scripts; the longest test files
# mostly wait on real timeouts, so they share 2 cores well (docs/performance.md, "The whole test
# suite"). The boot test then uses the built disk; the card's smoke boot comes last.
images=0 build_nice=${PRINTBOX_BUILD_NICE:-10}
[ "$(id -u)" -eq 0 ] && [ "$(uname -m)" = x86_64 ] && images=1
amd64_log=build/amd64-build.log amd64_status=build/amd64-build.status
pi_log=build/rpi-card-build.log pi_status_file=build/rpi-card-build.status
if [ "$images" = 1 ]; then
  mkdir -p build
  rm -f "$amd64_status" "$pi_status_file"
  echo "== images: building in the background (logs: $amd64_log, $pi_log)"
  # At a lower priority: the tests' own timing comes first. PRINTBOX_BUILD_NICE=0 gives the builds
  # the priority of other load on the machine (under CPU hogs at nice 0, builds at nice 10 take hours).
  (
    s=0; nice -n "$build_nice" scripts/build-image.sh amd64 >"$amd64_log" 2>&1 || s=$?; echo "$s" >"$amd64_status"
    s=0; nice -n "$build_nice" scripts/build-image.sh arm64 >"$pi_log" 2>&1 || s=$?; echo "$s" >"$pi_status_file"
  ) &
  images_pid=$!
fi
# Waits for one background build to end (its status file appears), prints its log, and fails the
# suite if it failed.
build_done() {
  local what=$1 status=$2 log=$3
  while [ ! -s "$status" ]; do
    kill -0 "$images_pid" 2>/dev/null || { echo "the image builds ended before $what's" >&2; exit 1; }
    sleep 2
  done
  cat "$log"
  [ "$(cat "$status")" = 0 ] || { echo "the $what build failed ($(cat "$status"))"; exit 1; }
}

stage "unit and integration tests"
# The files run alone (above) go after the rest, beside the boot test.
mapfile -t files < <(find dist/test -name '*.test.js' | sort | grep -vxF -f <(printf '%s\n' "${alone[@]}" "${card_files[@]}"))
run_files "${files[@]}"
stage_end "unit and integration tests"

# The files run alone go on beside the boot test: they spend their time waiting on SNMP timeouts
# (the hostile scans), the VM spends it in TCG. Their output goes to a log, printed when they end,
# so the two stages' lines do not interleave.
alone_log=build/files-run-alone.log
mkdir -p build
echo "== files run alone (soaks, hostile SNMP, announcement floods, the long server run): beside the boot test (log: $alone_log)"
alone_start=$(date +%s)
(
  s=0
  run_alone "${alone[@]}" || s=$?
  echo "== files run alone (soaks, hostile SNMP, announcement floods, the long server run) took $(( $(date +%s) - alone_start ))s"
  exit "$s"
) >"$alone_log" 2>&1 &
alone_pid=$!
# NAME PID LOG: waits for a run in the background, prints its log, fails the suite if it failed.
# (Its caller clears the PID's variable first, so that on_exit does not wait for it again.)
side_done() {
  local s=0
  wait "$2" || s=$?
  cat "$3"
  [ "$s" = 0 ] || { echo "$1 failed ($s)"; exit 1; }
}
alone_done() { local p=$alone_pid; alone_pid=""; side_done "files run alone" "$p" "$alone_log"; }

# Beside the boot test, on the second core (the boot test's VM has one vCPU, scripts/image/test-vm.sh),
# once the card is built (the card's build has that core until then; by then the files run alone
# are ending too):
#   - the boot test's stage "boot partition missing" in a VM of its own: its first boot waits out
#     the missing partition's 90 s device timeout, mostly idle;
#   - then the Raspberry Pi card's smoke boot (qemu-system-aarch64 -M virt).
# One after the other, so that no more than two VMs compute at once: on 2 cores, a second amd64
# VM started beside the card's build slowed everything (docs/performance.md, "The whole test
# suite"). Each writes a log, printed when it ends.
card_log=build/rpi-card-smoke.log part_log=build/boot-test-boot-partition.log
if [ -x scripts/boot-test.sh ]; then
  stage "appliance boot test"
  if [ "$images" = 1 ]; then
    build_done amd64 "$amd64_status" "$amd64_log"
    echo "== beside the boot test once the card is built: the boot test's stage \"boot partition missing\" (log: $part_log), then the card's smoke boot (log: $card_log)"
    ( while [ ! -s "$pi_status_file" ] && kill -0 "$images_pid" 2>/dev/null; do sleep 2; done
      exec env PRINTBOX_BOOT_TEST_REQUIRED=1 PRINTBOX_BOOT_TEST_NO_BUILD=1 PRINTBOX_BOOT_TEST_ONLY=boot-partition scripts/boot-test.sh ) >"$part_log" 2>&1 &
    part_pid=$!
    ( while kill -0 "$part_pid" 2>/dev/null; do sleep 2; done
      build_done "Raspberry Pi card" "$pi_status_file" "$pi_log" >/dev/null; nice -n "$build_nice" scripts/image/smoke-arm64.sh ) >"$card_log" 2>&1 &
    card_pid=$!
    PRINTBOX_BOOT_TEST_REQUIRED=1 PRINTBOX_BOOT_TEST_NO_BUILD=1 PRINTBOX_BOOT_TEST_SKIP=boot-partition scripts/boot-test.sh
    p=$part_pid part_pid=""
    side_done 'the boot test'"'"'s stage "boot partition missing"' "$p" "$part_log"
  else
    scripts/boot-test.sh
  fi
  stage_end "appliance boot test"
fi
alone_done

# The Raspberry Pi card: built (arm64 maintainer scripts under qemu-user, started above) and
# smoke-booted under qemu-system-aarch64 -M virt (beside the boot test, above).
stage "Raspberry Pi card: build and smoke boot"
if [ "$images" = 1 ]; then
  build_done "Raspberry Pi card" "$pi_status_file" "$pi_log"
  wait "$images_pid" || true
  images_pid=""
  p=$card_pid card_pid=""
  side_done "the Raspberry Pi card's smoke boot" "$p" "$card_log"
else
  echo "Raspberry Pi card skipped: building it needs root on an x86_64 host"
fi
stage_end "Raspberry Pi card: build and smoke boot (what was left of it after the boot test)"
