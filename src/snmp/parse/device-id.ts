// IEEE 1284 device ID strings ("MFG:Brother;CMD:PJL,PCL;MDL:HL-2270DW series;CLS:PRINTER;"),
// as printers publish them through the PWG Port Monitor MIB or vendor OIDs.
// Keys are case-insensitive and have long and short forms (MANUFACTURER/MFG, MODEL/MDL,
// COMMAND SET/CMD, CLASS/CLS, DESCRIPTION/DES); serial numbers appear as SN, SERN, SER or
// SERIALNUMBER depending on the vendor.

export interface DeviceId {
  manufacturer?: string;
  model?: string;
  commandSet?: string[];
  cls?: string;
  description?: string;
  serial?: string;
  fields: Record<string, string>;
}

const ALIASES: Record<string, keyof Omit<DeviceId, 'fields' | 'commandSet'> | 'commandSet'> = {
  MFG: 'manufacturer',
  MANUFACTURER: 'manufacturer',
  MDL: 'model',
  MODEL: 'model',
  CMD: 'commandSet',
  'COMMAND SET': 'commandSet',
  CLS: 'cls',
  CLASS: 'cls',
  DES: 'description',
  DESCRIPTION: 'description',
  SN: 'serial',
  SERN: 'serial',
  SER: 'serial',
  SERIALNUMBER: 'serial',
  'SERIAL NUMBER': 'serial',
};

/** Parses a device ID; undefined when the text has no KEY:value pair. */
export function parseDeviceId(text: string | undefined): DeviceId | undefined {
  if (!text) return undefined;
  // Some printers prefix the two length bytes of the USB form; drop anything before the first key.
  const body = text.replace(/^[^A-Za-z]+/, '');
  const fields: Record<string, string> = {};
  for (const part of body.split(';')) {
    const i = part.indexOf(':');
    if (i <= 0) continue;
    const key = part.slice(0, i).trim().toUpperCase();
    const value = part.slice(i + 1).trim();
    if (key && value && !Object.hasOwn(fields, key)) fields[key] = value;
  }
  if (Object.keys(fields).length === 0) return undefined;
  const id: DeviceId = { fields };
  for (const [key, value] of Object.entries(fields)) {
    const name = Object.hasOwn(ALIASES, key) ? ALIASES[key] : undefined;
    if (!name) continue;
    if (name === 'commandSet') {
      id.commandSet ??= value.split(',').map((s) => s.trim()).filter(Boolean);
    } else if (id[name] === undefined) {
      id[name] = value;
    }
  }
  return id;
}
