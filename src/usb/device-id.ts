// The printer class GET_DEVICE_ID reply (USB Printer Class 1.1, 4.2.1): a two-byte big-endian
// length that counts itself, then the IEEE 1284 Device ID text. Printers get this wrong in every
// way (a length that is little-endian, that leaves out its own two bytes, that runs past the
// reply, trailing NULs), so the length is only used to cut the text, never trusted beyond it.
import { parseDeviceId, type DeviceId } from '../snmp/parse/device-id.js';

/** The most a Device ID may be: what the agent asks for in the control transfer. */
export const DEVICE_ID_MAX = 1023;

export type DecodedDeviceId = { id: DeviceId; text: string } | { error: string };

export function decodeDeviceIdReply(reply: Uint8Array): DecodedDeviceId {
  if (reply.length < 2) return { error: `Device ID reply of ${reply.length} byte(s): shorter than its length field` };
  const be = (reply[0]! << 8) | reply[1]!;
  const le = (reply[1]! << 8) | reply[0]!;
  // The declared length, if it fits the reply in either byte order; else all that came.
  const declared = [be, le].find((n) => n >= 2 && n <= reply.length) ?? reply.length;
  // Latin-1 keeps every byte one character; control characters (NULs, line breaks) end fields.
  const text = Buffer.from(reply.subarray(2, declared))
    .toString('latin1')
    .replace(/[\x00-\x1f\x7f]+/g, ' ')
    .trim();
  const id = parseDeviceId(text);
  if (!id) return { error: `Device ID has no KEY:value field (${reply.length} bytes, starting ${JSON.stringify(text.slice(0, 40))})` };
  return { id, text };
}
