# shellcheck shell=bash
# shellcheck source-path=SCRIPTDIR
# shellcheck disable=SC2034,SC2154 # the stages share one shell and its variables (scripts/boot-test.sh)
# Update bundles for the A/B stage, made while the VM goes through the stages before it: the
# build's root filesystem with the next version, and one more whose Node cannot run (an update
# whose agent never becomes ready). Each is the same tree, changed with debugfs (the version, and
# the test console slot A's copy has), signed like the build's own bundle.
v_cur=$(sed -n 's/^  "version": "\(.*\)",$/\1/p' "$repo/package.json" | head -n1)
IFS=. read -r va vb vc <<<"${v_cur%%[-+]*}"
v_next=$va.$vb.$(( vc + 1 )) v_bad=$va.$vb.$(( vc + 2 ))
variant_bundle() { # VERSION [debugfs command]
  local v=$1 img=$tmp/rootfs-$1.img
  cp --sparse=always "$out/rootfs.img" "$img"
  tvm_test_rootfs "$img" # the test console, as in slot A's copy
  debugfs -R "cat /opt/printbox/package.json" "$img" 2>/dev/null \
    | sed "s/^  \"version\": \".*\",\$/  \"version\": \"$v\",/" >"$tmp/package-$v.json"
  printf 'rm /opt/printbox/package.json\nwrite %s /opt/printbox/package.json\n%s\n' "$tmp/package-$v.json" "${2:-}" \
    | debugfs -w -f - "$img" >/dev/null 2>&1
  "$repo/scripts/image/bundle.sh" amd64 "$img" "$upd" "$v"
  rm -f "$img"
}
(
  export PRINTBOX_BUNDLE_KEY=${PRINTBOX_BUNDLE_KEY:-$repo/build/keys/development.key}
  export PRINTBOX_BUNDLE_CERT=${PRINTBOX_BUNDLE_CERT:-$repo/build/keys/development.crt}
  export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git -C "$repo" log -1 --format=%ct 2>/dev/null || echo 1700000000)}
  variant_bundle "$v_next"
  variant_bundle "$v_bad" "sif /opt/printbox/node/bin/node mode 0100000"
  # The bundles RAUC must refuse before it writes anything carry a 4 MiB stand-in for the root
  # filesystem (a random 1 MiB file inside: mksquashfs needs something to compress): what is
  # checked (the signature, the version) is the same, and each costs the VM a download of 1 MiB
  # instead of 220. Signed by a key the box does not trust, with its signature changed, and the
  # release before (properly signed).
  small=$tmp/small-bundles
  mkdir -p "$small/files"
  head -c 1M /dev/urandom >"$small/files/filler"
  truncate -s 4M "$small/rootfs.img" && mkfs.ext4 -q -F -d "$small/files" "$small/rootfs.img"
  "$repo/scripts/image/bundle.sh" amd64 "$small/rootfs.img" "$small" "$v_next"
  "$repo/scripts/image/bundle.sh" amd64 "$small/rootfs.img" "$small" "$v_cur"
  mv "$small/printbox-$v_cur.raucb" "$upd/older.raucb"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 365 -subj "/CN=not PrintBox" \
    -keyout "$tmp/other.key" -out "$tmp/other.crt" 2>/dev/null
  rauc resign --keyring="$PRINTBOX_BUNDLE_CERT" --signing-keyring="$tmp/other.crt" --cert="$tmp/other.crt" --key="$tmp/other.key" \
    "$small/printbox-$v_next.raucb" "$upd/other-key.raucb" >/dev/null 2>&1
  cp "$small/printbox-$v_next.raucb" "$upd/altered.raucb"
  printf 'X' | dd of="$upd/altered.raucb" bs=1 seek=$(( $(stat -c %s "$upd/altered.raucb") - 100 )) conv=notrunc 2>/dev/null
  rm -rf "$small"
) >"$tmp/bundles.log" 2>&1 &
bundles_pid=$!
