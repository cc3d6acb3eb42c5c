// What PrintMaster's server reads from an upload in words of its own, made from the box's records
// (facts from its source: server/main.go handleDevicesBatch, deriveDeviceStatus, enrichDevicesWithMetrics;
// agent/agent/parse.go for the supply figure):
// - a device's health: the server keeps the whole uploaded device as raw_data and calls a device
//   "error" when raw_data.error is a non-empty string, "jam" when raw_data.paper_jam is true, and
//   "healthy" otherwise (its dashboard and the UI's status filters read that). The box says which
//   of its status lines are a jam and which stop the printer (model/status-lines.ts); a warning
//   (low toner, service requested) is neither, as on the server;
// - a supply reported as "some remaining" (Printer-MIB -3, kept as -3 in the box's readings): the
//   server shows the newest reading's toner_levels, and PrintMaster's agent reports such a supply
//   at 10 %; the box sends the same figure, so that the server shows one. Other negative levels
//   (-2 unknown) are left out, as that agent leaves them out.
import type { Device, Snapshot } from '../model/device.js';
import { snapshotJson } from '../model/views.js';
import { lineSaying, STATUS_PATTERNS, type StatusKind } from '../model/status-lines.js';

/** PrintMaster's agent's figure for a supply at "some remaining" (parse.go: "report as low (10%)"). */
export const SOME_REMAINING_PERCENT = 10;
const SOME_REMAINING = -3;

/** Status kinds that stop the printer: the server's "error". */
const ERROR_KINDS: StatusKind[] = ['door_open', 'paper_out', 'offline', 'supply_out', 'output_full', 'failure'];

/** The device's health as the server reads it: `paper_jam` and `error` ("" for none: the lines that stop the printer, a jam aside). */
export function statusFields(lines: readonly string[] | undefined): { paper_jam: boolean; error: string } {
  const paper_jam = lineSaying('jam', lines) !== undefined;
  const errors = (lines ?? []).filter((l) => !STATUS_PATTERNS.jam.test(l) && ERROR_KINDS.some((k) => STATUS_PATTERNS[k].test(l)));
  return { paper_jam, error: errors.join('; ').slice(0, 500) };
}

/** The Device JSON of an upload with the server's health fields. */
export function deviceUpload(json: Record<string, unknown>, d: Pick<Device, 'status_messages'>): Record<string, unknown> {
  return { ...json, ...statusFields(d.status_messages) };
}

/** A reading as the server gets it: toner levels as PrintMaster's agent gives them. */
export function metricsUpload(s: Snapshot): Record<string, unknown> {
  const json = snapshotJson(s);
  const levels = json.toner_levels as Record<string, unknown> | undefined;
  if (!levels) return json;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(levels)) {
    if (v === SOME_REMAINING) out[k] = SOME_REMAINING_PERCENT;
    else if (typeof v !== 'number' || v >= 0) out[k] = v;
  }
  return { ...json, toner_levels: out };
}
