// Folds what a network printer reported (an Observation) into its device record. What a person
// set (asset_number, location, description, and any field in locked_fields) is never overwritten:
// that rule is model/record-fold.ts's, shared with USB printers; here is what only network reads
// keep (the address, why the printer is listed, its ports, the trust notes).
import type { Device } from '../model/device.js';
import type { Observation } from '../model/observation.js';
import { foldReadFields, isLocked } from '../model/record-fold.js';
import { withTrustNotes } from './move-check.js';
import { isProbeReason } from './port-probe.js';
import { formatTime } from '../model/time.js';
import { NOT_ANSWERING } from './status-lines.js';

export function mergeObservation(existing: Device | undefined, o: Observation): Device {
  const d: Device = existing
    ? { ...existing }
    : {
        serial: o.serial,
        ip: o.ip,
        last_seen: o.now,
        created_at: o.now,
        first_seen: o.now,
        device_type: 'network',
        source_type: o.source ?? 'snmp',
        is_usb: false,
        is_default: false,
        is_shared: false,
        usb_webui_available: false,
        is_saved: false,
        visible: true,
      };
  foldReadFields(d, o.fields);
  if (!isLocked(existing, 'ip')) d.ip = o.ip;
  d.last_seen = o.now;
  d.discovery_method = o.source ?? 'snmp';
  d.source_type = existing?.source_type === 'import' || !existing ? (o.source ?? 'snmp') : existing.source_type;
  d.device_type ||= 'network';
  if (o.scanId !== undefined) d.last_scan_id = o.scanId;
  // Why the printer is listed accumulates: a poll or a later scan of another kind keeps what
  // earlier scans found (the printer information is otherwise replaced by each read).
  const before = existing?.printer_info?.discovery_methods;
  const methods = [...new Set([...(Array.isArray(before) ? (before as string[]) : []), ...(o.discoveryMethods ?? [])])].sort();
  d.printer_info = methods.length ? { ...o.printerInfo, discovery_methods: methods } : o.printerInfo;
  if (existing?.printer_info) d.printer_info = withEarlierPorts(d.printer_info, existing.printer_info, o.portsProbed === true);
  // It answered: whatever said it was not answering no longer stands.
  if (d.raw_data && 'not_answering_since' in d.raw_data) {
    const { not_answering_since: _gone, ...raw } = d.raw_data;
    d.raw_data = raw;
  }
  // The printer's status lines replace the old ones; a pending move or flagged counter stays said.
  return withTrustNotes(d);
}

/**
 * What earlier reads saw stays on the record: open ports are what the last port probe found (a
 * scan's probe replaces them) plus the ports a read answered on since (a poll or an announcement
 * does not probe), and the reasons it was detected and the services it advertised accumulate
 * across scans, announcements and polls, so that none erases what another saw (a probe's own
 * reasons are replaced by the next probe).
 */
function withEarlierPorts(info: Device['printer_info'], before: NonNullable<Device['printer_info']>, probed: boolean): Device['printer_info'] {
  if (!info) return info;
  const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
  const strings = (v: unknown) => list(v).filter((r): r is string => typeof r === 'string');
  const ports = [...new Set([...(probed ? [] : list(before.open_ports)), ...list(info.open_ports)].filter((p): p is number => Number.isInteger(p)))].sort((a, b) => a - b);
  const earlier = strings(before.detection_reasons).filter((r) => !probed || !isProbeReason(r));
  const reasons = [...new Set([...strings(info.detection_reasons), ...earlier])].slice(0, 32);
  const services = [...new Set([...strings(info.advertised_services), ...strings(before.advertised_services)])].sort().slice(0, 32);
  return {
    ...info,
    ...(ports.length ? { open_ports: ports } : {}),
    ...(reasons.length ? { detection_reasons: reasons } : {}),
    ...(services.length ? { advertised_services: services } : {}),
  };
}


/**
 * Marks a device that did not answer a poll, without deleting anything: "not answering since
 * <the first failed poll>" (raw_data.not_answering_since), kept until it answers again.
 */
export function markUnreachable(d: Device, now: number, message: string): Device {
  const raw = d.raw_data ?? {};
  const since = typeof raw.not_answering_since === 'string' ? raw.not_answering_since : formatTime(now);
  const others = (d.status_messages ?? []).filter((m) => !m.startsWith(NOT_ANSWERING));
  return withTrustNotes({
    ...d,
    status_messages: [`${NOT_ANSWERING} ${since}: ${message}`, ...others].slice(0, 32),
    raw_data: { ...raw, not_answering_since: since, last_poll_failed_at: formatTime(now) },
  });
}
