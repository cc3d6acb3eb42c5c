#!/usr/bin/env bash
# First boot to HTTPS of the amd64 image on Debian 13 trixie (as shipped) against the same image
# on Debian 12 bookworm, built and booted on the same machine in the same run, turn about.
#   scripts/bench/debian-release.sh [RUNS]          (3 boots of each; needs root, as the boot test)
#   PRINTBOX_BENCH_NO_BUILD=1 scripts/bench/debian-release.sh   (boot the images built last time)
# Both images are built from this repository's HEAD in worktrees under build/bench-release/: the
# same agent, overlay, units and layers; the bookworm one differs only in what the release needs
# (image/printbox.conf SUITE=bookworm; amd64.conf without systemd-repart, which is still part of
# bookworm's systemd package). So the difference measured is Debian's: kernel, systemd, libraries.
# Each boot is a fresh copy of its disk with printbox.toml on its boot partition (a real first
# boot: certificate, provisioning, host name), in the boot test's VM (QEMU TCG, one vCPU, user-mode
# network with host forwards on 127.0.0.1 only: nothing leaves the VM). The two releases take
# turns (B T T B B T ...) so that a machine growing busier weighs on both alike. Prints each boot
# and, per release, the median: power-on to the first HTTPS answer from outside, systemd-analyze's
# total (firmware to the default target), and the kernel and systemd the image runs; then the
# images' sizes, and for the last boot of each where its time went.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
runs=${1:-3}
[ "$(id -u)" = 0 ] || { echo "run as root (QEMU, mmdebstrap)" >&2; exit 1; }
export PATH="$("$repo/scripts/box-node.sh")/bin:$PATH"
"$repo/scripts/npm-deps.sh"   # the worktrees build with this node_modules
bench=$repo/build/bench-release
releases=(bookworm trixie)

# One worktree per release at HEAD (uncommitted changes are not in it: commit what you measure).
prepare_worktree() {
  local rel=$1 wt=$bench/$1
  if [ -e "$wt/.git" ]; then
    git -C "$wt" checkout -q --detach "$(git -C "$repo" rev-parse HEAD)"
    git -C "$wt" reset -q --hard
  else
    git -C "$repo" worktree add -q --detach "$wt" HEAD
  fi
  ln -sfn "$repo/node_modules" "$wt/node_modules"
  [ "$rel" = bookworm ] || return 0
  sed -i 's/^SUITE=.*/SUITE=bookworm/' "$wt/image/printbox.conf"
  sed -i '/^LAYER_PACKAGES=/s/ systemd-repart//' "$wt/image/layers/amd64.conf"
  grep -qx 'SUITE=bookworm' "$wt/image/printbox.conf" || { echo "bookworm worktree: SUITE not set" >&2; exit 1; }
}

if [ "${PRINTBOX_BENCH_NO_BUILD:-}" != 1 ]; then
  mkdir -p "$bench"
  for rel in "${releases[@]}"; do
    prepare_worktree "$rel"
    # A cache per release: the staged agent and the Debian packages of one never mix with the other's.
    echo "== building the $rel image ($(git -C "$repo" rev-parse --short HEAD))"
    t0=$SECONDS
    cache=/var/cache/printbox-build; [ "$rel" = trixie ] || cache+=-$rel
    PRINTBOX_CACHE=$cache "$bench/$rel/scripts/build-image.sh" amd64 \
      > "$bench/build-$rel.log" 2>&1 || { echo "the $rel build failed: $bench/build-$rel.log" >&2; tail -20 "$bench/build-$rel.log" >&2; exit 1; }
    echo "   built in $(( SECONDS - t0 )) s"
  done
fi
for rel in "${releases[@]}"; do
  [ -s "$bench/$rel/build/amd64/rootfs.img" ] || { echo "no $rel image: run without PRINTBOX_BENCH_NO_BUILD" >&2; exit 1; }
  grep -q "^# PrintBox amd64 image, .*, $rel\$" "$bench/$rel/build/amd64/manifest.txt" \
    || { echo "$bench/$rel/build/amd64 is not a $rel image" >&2; exit 1; }
done

# shellcheck source=../image/test-vm.sh
. "$repo/scripts/image/test-vm.sh"
tvm_install_tools
tmp=$(mktemp -d /tmp/printbox-release-bench.XXXXXX)
trap 'tvm_poweroff_hard 2>/dev/null; rm -rf "$tmp"' EXIT
printf '[admin]\nuser = "tech"\npassword = "bench-pass-0451"\n' > "$tmp/printbox.toml"
results=$tmp/results.tsv

boot_once() {
  local rel=$1 run=$2 t figures
  TVM_OUT=$bench/$rel/build/amd64
  mkdir -p "$tmp/$rel"
  tvm_prepare "$tmp/$rel" "$tmp/printbox.toml"
  tvm_boot "$rel-$run"
  if ! t=$(tvm_wait_https 300); then echo "$rel run $run: no HTTPS" >&2; tail -20 "$TVM_SERIAL" >&2; exit 1; fi
  tvm_wait_console || { echo "$rel run $run: no test console" >&2; exit 1; }
  figures=$(VM_TIMEOUT=330 tvm_sh 'timeout 300 systemctl is-system-running --wait >/dev/null
    systemd-analyze | head -n 1 | sed -n "s/.*= \([0-9.]*\)s.*/\1/p"
    uname -r
    systemctl --version | head -n 1 | cut -d" " -f2')
  # Where the time went, kept for the summary (the last boot of each release is printed).
  VM_TIMEOUT=60 tvm_sh 'systemd-analyze | head -n 1
    systemd-analyze critical-chain printbox-agent.service | sed -n "4,12p"
    systemd-analyze blame | head -n 12
    journalctl -b -u printbox-agent -o cat | grep -m1 "start-up phases"' > "$tmp/$rel/where.txt" 2>&1 || true
  tvm_poweroff_hard
  mapfile -t f <<<"$figures"
  printf '%s\t%s\t%s\t%s\t%s\n' "$rel" "$t" "${f[0]:-?}" "${f[1]:-?}" "${f[2]:-?}" >> "$results"
  printf '%-9s run %d: power-on to HTTPS %6s s, systemd-analyze %6s s (kernel %s, systemd %s)\n' \
    "$rel" "$run" "$t" "${f[0]:-?}" "${f[1]:-?}" "${f[2]:-?}"
}

for run in $(seq 1 "$runs"); do
  if [ $(( run % 2 )) = 1 ]; then order=(bookworm trixie); else order=(trixie bookworm); fi
  for rel in "${order[@]}"; do boot_once "$rel" "$run"; done
done

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.1f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo
echo "release   boots  power-on to HTTPS (median)  systemd-analyze (median)  kernel / systemd   root filesystem"
for rel in "${releases[@]}"; do
  https=$(awk -F'\t' -v r="$rel" '$1 == r { print $2 }' "$results" | median)
  analyze=$(awk -F'\t' -v r="$rel" '$1 == r { print $3 }' "$results" | median)
  versions=$(awk -F'\t' -v r="$rel" '$1 == r { print $4 " / " $5; exit }' "$results")
  used=$(sed -n 's/^rootfs.img .*(\([0-9]*\) MiB used).*/\1 MiB/p' "$bench/build-$rel.log")   # the build's du of the tree
  printf '%-9s %5d  %24s s  %22s s  %-16s  %s\n' "$rel" "$runs" "$https" "$analyze" "$versions" "${used:-?}"
done
for rel in "${releases[@]}"; do
  echo; echo "== $rel, its last boot: systemd-analyze, the agent's critical chain, the slowest units, the agent's start-up"
  sed 's/^/   /' "$tmp/$rel/where.txt"
done
