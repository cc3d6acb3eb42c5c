// What a printer's status lines (status_messages: SNMP hrPrinterDetectedErrorState and prtAlertTable,
// IPP printer-state-reasons, USB) say, by kind: one list of patterns for the box's alert rules
// (model/alert-rules.ts) and for the status fields the central server reads (server/pm-fields.ts).

/** Conditions a person must come to the printer for, or that stop it. */
export const STATUS_PATTERNS = {
  jam: /jam/i,
  door_open: /\b(door|cover|interlock)( is)?[ -]open/i,
  paper_out: /\bno paper\b|\bpaper[ -](empty|out)\b|media-empty|media-needed|input media supply empty|input tray empty/i,
  service_requested: /service[ -](requested|needed|required)|call (for )?service|overdue preventive maintenance/i,
  /**
   * The printer down or off line: hrDeviceStatus down, hrPrinterDetectedErrorState offline, IPP's
   * `offline-report`, and discovery's own lines (discovery/status-lines.ts) for a printer that
   * stopped answering or said goodbye.
   */
  offline: /\boffline\b|\boff[ -]line\b|\bdevice down\b|\bshutdown\b|^not answering since\b/i,
  /** A marker supply gone or spent: the printer cannot print. */
  supply_out: /\bno (toner|ink)\b|\b(toner|ink|print ribbon) empty\b|marker supply missing|toner-empty|marker-supply-empty/i,
  output_full: /\boutput (tray |bin )?full\b|output-area-full/i,
  /** The printer's own words for a fault (as PrintMaster's server classifies its lines). */
  failure: /\berror\b|\bfault\b|\bfailure\b/i,
} as const satisfies Record<string, RegExp>;

export type StatusKind = keyof typeof STATUS_PATTERNS;

/** The first line that says `kind`, or undefined. */
export function lineSaying(kind: StatusKind, lines: readonly string[] | undefined): string | undefined {
  return lines?.find((m) => STATUS_PATTERNS[kind].test(m));
}
