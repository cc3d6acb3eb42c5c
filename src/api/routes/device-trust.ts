// What only a person may decide about a printer's readings (discovery/move-check.ts): that the
// printer really moved to the address a reply came from, and that a page counter really went down
// (a board swap, a reset). Until then discovery keeps the record where it was and stores nothing
// from the doubtful readings.
import type { App } from '@tinyhttp/app';
import type { AgentContext } from '../context.js';
import { readJsonBody, requireString } from '../body.js';
import { sendJson, sendText } from '../respond.js';
import { deviceJson } from '../views.js';
import { atNewAddress, counterFlagOf, pendingMoveOf, withTrustChange } from '../../discovery/move-check.js';
import { normalMac } from '../../discovery/neighbours.js';

export function register(app: App, ctx: AgentContext): void {
  const { devices, events, log } = ctx;

  app.post('/devices/confirm-move', async (req, res) => {
    const body = await readJsonBody(req, res);
    if (!body) return;
    const serial = requireString(body, 'serial', res);
    if (serial === undefined) return;
    // The address the person saw: a newer sighting elsewhere must not be confirmed unseen.
    const ip = requireString(body, 'ip', res);
    if (ip === undefined) return;
    const device = devices.get(serial);
    if (!device) return sendText(res, 404, `no device with serial ${JSON.stringify(serial)}`);
    const pending = pendingMoveOf(device);
    if (!pending) return sendText(res, 409, `device ${serial} has no pending move`);
    if (pending.ip !== ip) return sendText(res, 409, `device ${serial}'s pending move is to ${pending.ip}, not ${ip}`);
    const mac = normalMac(pending.neighbour_mac);
    const moved = atNewAddress(device, pending.ip, { ...(mac ? { neighbour_mac: mac } : {}), ...(pending.engine_id ? { snmp_engine_id: pending.engine_id } : {}) });
    devices.put(moved);
    log.warn({ serial, from: device.ip, to: pending.ip, checks: pending.checks }, `printer move from ${device.ip} to ${pending.ip} confirmed by a person`);
    events.emit('device_change', { serial, change: 'updated', moved: { from: device.ip, to: pending.ip } });
    sendJson(res, 200, deviceJson(devices.get(serial)!));
  });

  app.post('/devices/confirm-counter', async (req, res) => {
    const body = await readJsonBody(req, res);
    if (!body) return;
    const serial = requireString(body, 'serial', res);
    if (serial === undefined) return;
    const device = devices.get(serial);
    if (!device) return sendText(res, 404, `no device with serial ${JSON.stringify(serial)}`);
    const flag = counterFlagOf(device);
    if (!flag) return sendText(res, 409, `device ${serial} has no flagged page counter`);
    // The flagged reading becomes the newest stored one: later readings are compared with it.
    const ts = Date.parse(flag.seen_at);
    devices.recordReadings([{ device: withTrustChange(device, { counter_flag: undefined }), snapshot: { serial, ts, ...flag.reading }, existed: true }]);
    log.warn({ serial, page_count: flag.page_count, stored_page_count: flag.stored_page_count }, 'lower page counter accepted by a person');
    events.emit('device_change', { serial, change: 'metrics' });
    sendJson(res, 200, deviceJson(devices.get(serial)!));
  });
}
