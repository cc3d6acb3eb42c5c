// The body of /devices/list (contract 2.1, 4.1): every saved device's entry, in serial order. Each
// entry is written from the pieces its record keeps (model/views.ts savedEntryParts) around its
// current last_seen, as bytes; a record without current pieces is made into its entry here.
import type { DeviceStore } from '../store/devices.js';
import { SAVED_ENTRY_INFO, savedEntryOpening, savedEntryText } from '../model/views.js';
import { formatTime } from '../model/time.js';
import { BodyChunks } from './body-chunks.js';

export function savedListBody(devices: DeviceStore): Buffer[] {
  const body = new BodyChunks();
  body.text('[');
  let first = true;
  for (const row of devices.eachSavedEntry()) {
    if (!first) body.text(',');
    first = false;
    if (row.device) {
      body.text(savedEntryText(row.device));
      continue;
    }
    const { entry, head_bytes: head, tail_bytes: tail } = row;
    const seen = JSON.stringify(formatTime(row.seen));
    body.text(savedEntryOpening(row.serial));
    for (const opening of ['', SAVED_ENTRY_INFO]) {
      body.text(opening);
      body.bytes(entry, 0, head);
      body.text(seen);
      body.bytes(entry, head, head + tail);
    }
    body.bytes(entry, head + tail);
  }
  body.text(']\n');
  return body.done();
}
