# shellcheck shell=bash
# The boot test's USB printer stage (sourced by scripts/boot-test/80-usb.sh, in the VM it has booted,
# signed in: uses its vm, api, check, pass, fail, $https_port and $cookie).
# Real USB printers on virtual buses: dummy_hcd (three buses), libcomposite and usb_f_printer in
# the VM's own kernel, driven by test/vm/usb-printers.mjs (in the test's disk copy only). The agent
# sees them through udev's hotplug events and the real `usb` package, under its own sandbox.
# Checked from the host over the API: identity from the IEEE 1284 Device ID or the USB serial,
# port_name, PJL page count, the SSE event, unplugged = offline, replugged elsewhere = same record,
# hostile Device IDs (none, malformed, oversized) and a printer that never answers its class
# requests (FunctionFS), logged while the agent serves on and reads the other printers.

usb() { VM_TIMEOUT=${USB_TIMEOUT:-60} vm "cd /opt/printbox-test && /opt/printbox/node/bin/node usb-printers.mjs $*"; }
# profile SERIAL EXPR: evaluates EXPR on the device profile `p` (GET /api/devices/profile).
profile() {
  api -H "Cookie: $cookie" -H 'Accept: application/json' "https://127.0.0.1:$https_port/api/devices/profile?serial=$1" |
    node -e 'let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => { let p; try { p = JSON.parse(s); console.log(eval(process.argv[1])) } catch { console.log("") } })' "$2"
}
post() { api -o /dev/null -w '%{http_code}' -H "Cookie: $cookie" -H 'Content-Type: application/json' -d "$2" "https://127.0.0.1:$https_port$1"; }
# The agent's restarts so far (the watchdog stage before this one restarted it once).
usb_restarts_before=$(vm systemctl show -p NRestarts --value printbox-agent.service | tr -d '\r\n') || true
# is_ms TEXT: time-plug printed a number of milliseconds (not "timeout", not an error).
is_ms() { [[ $1 =~ ^[0-9]+$ ]]; }
# wait_for SECONDS SERIAL EXPR: until the profile's EXPR prints true.
wait_for() { local i; for i in $(seq 1 $(( $1 * 2 ))); do [ "$(profile "$2" "$3")" = true ] && return 0; sleep 0.5; done; return 1; }

usb setup >/dev/null || fail "USB gadget modules (dummy_hcd, libcomposite, usb_f_printer)"
usb add p1 "'{\"pnp\":\"MFG:Brother;CMD:PJL,PCL;MDL:HL-L2350DW series;CLS:PRINTER;SN:PBTEST0001;\",\"serial\":\"GADGET1\",\"pagecount\":4242}'" >/dev/null || true
usb add p2 "'{\"pnp\":\"MFG:Acme;MDL:Silent 1;CLS:PRINTER;CMD:PCL;\",\"serial\":\"ACME-SILENT-2\"}'" >/dev/null || true
usb add p3 "'{\"pnp\":\"this is no device id at all\",\"serial\":\"BADID-3\"}'" >/dev/null || true
big=$(printf 'X%.0s' $(seq 1 1000))
usb add p4 "'{\"pnp\":\"SN:BIG0004;MFG:Big;CMD:PJL;MDL:$big;\",\"serial\":\"BIG-4-USB\"}'" >/dev/null || true

# Plugged in: listed (seen since the plug, not unplugged) within the issue's 2 s budget.
ms1=$(usb time-plug p1 dummy_udc.0 PBTEST0001 | tr -d '\r\n') || true
ms2=$(usb time-plug p2 dummy_udc.1 ACME-SILENT-2 | tr -d '\r\n') || true
echo "       plug to listed in /devices/discovered: ${ms1:-?} ms and ${ms2:-?} ms (VM clock)"
check "USB printer with a Device ID listed after its plug (${ms1:-?} ms)" is_ms "$ms1"
check "USB printer without a serial in its Device ID listed (${ms2:-?} ms)" is_ms "$ms2"
check "identity from the IEEE 1284 Device ID: Brother HL-L2350DW series, usb:1-1" \
  test "$(profile PBTEST0001 '[p.device.manufacturer, p.device.model, p.device.port_name, p.device.is_usb, p.device.source_type, p.device.device_type].join("|")')" = "Brother|HL-L2350DW series|usb:1-1|true|usb|usb"
check "PJL page count read over the bulk endpoints (4242)" wait_for 15 PBTEST0001 'p.latest_metrics?.page_count === 4242'
check "no serial in the Device ID: the USB serial (ACME-SILENT-2), Acme Silent 1 on usb:2-1" \
  test "$(profile ACME-SILENT-2 '[p.device.manufacturer, p.device.model, p.device.port_name].join("|")')" = "Acme|Silent 1|usb:2-1"
code=$(post /devices/save '{"serial":"PBTEST0001"}') || true
check "a USB printer saved (200: $code)" test "$code" = 200
collected=$(api -H "Cookie: $cookie" -H 'Content-Type: application/json' -d '{"serial":"PBTEST0001"}' "https://127.0.0.1:$https_port/devices/metrics/collect") || true
check "POST /devices/metrics/collect reads it now: $collected" grep -q '"page_count":4242' <<<"$collected"

# Unplugged: kept, offline, last_seen kept; read now: 504. Hostile Device IDs meanwhile.
seen=$(profile PBTEST0001 'p.device.last_seen') || true
usb unplug p1 >/dev/null || true
check "unplugged: still there, status 'offline: unplugged'" wait_for 10 PBTEST0001 '(p.device.status_messages ?? []).includes("offline: unplugged")'
check "unplugged: last_seen kept ($seen)" test -n "$seen" -a "$(profile PBTEST0001 'p.device.last_seen')" = "$seen"
code=$(post /devices/metrics/collect '{"serial":"PBTEST0001"}') || true
check "collect while unplugged: 504 ($code)" test "$code" = 504
api -N -H "Cookie: $cookie" --max-time 15 "https://127.0.0.1:$https_port/events" > "$tmp/usb-events.txt" 2>/dev/null &
events_pid=$!
sleep 1
ms3=$(usb time-plug p3 dummy_udc.0 BADID-3 | tr -d '\r\n') || true
check "malformed Device ID: listed by its USB serial (BADID-3, ${ms3:-?} ms)" is_ms "$ms3"
check "malformed Device ID: logged" vm "journalctl -b -u printbox-agent.service -o cat --no-pager | grep 'BADID-3' | grep -q 'no KEY:value'"
usb unplug p2 >/dev/null || true
ms4=$(usb time-plug p4 dummy_udc.1 BIG-4-USB | tr -d '\r\n') || true
# f_printer sends all 1,035 bytes against the 1,023 asked for (what CUPS asks too): the host
# controller reports the overrun, the agent logs it and lists the printer by its USB serial.
check "oversized Device ID (a 1,000-character model): listed by its USB serial (${ms4:-?} ms)" is_ms "$ms4"
check "oversized Device ID: logged" \
  vm "journalctl -b -u printbox-agent.service -o cat --no-pager | grep 'BIG-4-USB' | grep -q 'Device ID'"
check "agent responsive throughout (GET /api/version)" version_ok
wait "$events_pid" 2>/dev/null || true
check "SSE: device_change for the plugged printer" grep -q '"serial":"BADID-3"' "$tmp/usb-events.txt"

# A printer that never answers its class requests (FunctionFS): listed by its USB serial once
# they time out, logged; meanwhile a printer plugged into another port is read as usual.
usb add-hostile p5 HOSTILE-5 >/dev/null || true
usb plug-hostile p5 dummy_udc.2 >/dev/null || true
usb unplug p3 >/dev/null || true
ms5=$(usb time-plug p1 dummy_udc.0 PBTEST0001 | tr -d '\r\n') || true
check "replugged beside a stalling printer (${ms5:-?} ms): same record, online, usb:1-1" \
  wait_for 10 PBTEST0001 'p.device.port_name === "usb:1-1" && !(p.device.status_messages ?? []).includes("offline: unplugged") && p.device.is_saved === true'
check "stalling printer: listed by its USB serial on usb:3-1" wait_for 30 HOSTILE-5 'p.device.port_name === "usb:3-1"'
check "stalling printer: the unanswered GET_DEVICE_ID logged" \
  vm "journalctl -b -u printbox-agent.service -o cat --no-pager | grep 'HOSTILE-5' | grep -q 'Device ID'"
check "agent responsive with a stalling printer attached" version_ok
usb unplug p5 >/dev/null || true
usb unplug p4 >/dev/null || true
usb unplug p1 >/dev/null || true
usb plug p1 dummy_udc.2 >/dev/null || true
check "moved to another bus: the same record on usb:3-1" wait_for 10 PBTEST0001 'p.device.port_name === "usb:3-1" && p.device.is_saved === true'
check "the agent never restarted during the USB stage (NRestarts $usb_restarts_before before it)" \
  vm "systemctl show -p NRestarts --value printbox-agent.service | grep -qx '${usb_restarts_before:-x}'"
# Nothing plugged in after this stage: the reboot that follows must not meet a gadget-side
# process holding an f_printer node (see unplug in usb-printers.mjs).
for g in p1 p2 p3 p4 p5; do usb unplug $g >/dev/null || true; done
