// GET_PORT_STATUS (USB Printer Class 1.1, 4.2.2): one byte in the layout of a Centronics status
// port. Bit 5 Paper Empty, bit 4 Select, bit 3 Not Error; the others are reserved.

export interface PortStatus {
  paperEmpty: boolean;
  selected: boolean;
  error: boolean;
}

export function decodePortStatus(byte: number): PortStatus {
  return { paperEmpty: (byte & 0x20) !== 0, selected: (byte & 0x10) !== 0, error: (byte & 0x08) === 0 };
}

/** What a technician reads in status_messages: nothing when the printer is ready. */
export function portStatusMessages(s: PortStatus): string[] {
  const out: string[] = [];
  if (s.paperEmpty) out.push('paper empty');
  if (!s.selected) out.push('offline (not selected)');
  if (s.error) out.push('printer error');
  return out;
}
