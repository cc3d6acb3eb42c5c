// Device management (contract 4.2): save, save all, update what a person sets, delete.
import type { App } from '@tinyhttp/app';
import type { AgentContext } from '../context.js';
import { readJsonBody, requireString } from '../body.js';
import { sendJson, sendText } from '../respond.js';
import { deviceJson } from '../views.js';
import { formatTime } from '../../model/time.js';
import type { LockedField } from '../../model/device.js';

// Fields a person sets through /devices/update; discovery never overwrites them.
const PERSON_FIELDS = ['asset_number', 'location', 'description'] as const;
const MAX_FIELD_LENGTH = 1024;

export function register(app: App, ctx: AgentContext): void {
  const { devices, events } = ctx;

  app.post('/devices/save', async (req, res) => {
    const body = await readJsonBody(req, res);
    if (!body) return;
    const serial = requireString(body, 'serial', res);
    if (serial === undefined) return;
    if (!devices.save(serial)) return sendText(res, 404, `no device with serial ${JSON.stringify(serial)}`);
    events.emit('device_change', { serial, change: 'saved' });
    sendJson(res, 200, deviceJson(devices.get(serial)!));
  });

  app.post('/devices/save/all', (_req, res) => {
    const saved = devices.saveAll();
    for (const serial of saved) events.emit('device_change', { serial, change: 'saved' });
    sendJson(res, 200, { saved: saved.length, serials: saved });
  });

  app.post('/devices/delete', async (req, res) => {
    const body = await readJsonBody(req, res);
    if (!body) return;
    const serial = requireString(body, 'serial', res);
    if (serial === undefined) return;
    if (!devices.delete(serial)) return sendText(res, 404, `no device with serial ${JSON.stringify(serial)}`);
    events.emit('device_change', { serial, change: 'deleted' });
    sendJson(res, 200, { deleted: serial });
  });

  app.post('/devices/update', async (req, res) => {
    const body = await readJsonBody(req, res);
    if (!body) return;
    const serial = requireString(body, 'serial', res);
    if (serial === undefined) return;
    for (const [k, v] of Object.entries(body)) {
      if (k === 'serial') continue;
      if (k === 'visible') {
        if (typeof v !== 'boolean') return sendText(res, 400, 'field visible must be true or false');
        continue;
      }
      if (!(PERSON_FIELDS as readonly string[]).includes(k)) return sendText(res, 400, `unknown field ${k}`);
      if (typeof v !== 'string') return sendText(res, 400, `field ${k} must be a string`);
      if (v.length > MAX_FIELD_LENGTH) return sendText(res, 400, `field ${k} is longer than ${MAX_FIELD_LENGTH} characters`);
    }
    const device = devices.get(serial);
    if (!device) return sendText(res, 404, `no device with serial ${JSON.stringify(serial)}`);
    const now = formatTime(ctx.now());
    const locks: LockedField[] = [...(device.locked_fields ?? [])];
    for (const f of PERSON_FIELDS) {
      if (typeof body[f] !== 'string') continue;
      device[f] = body[f] as string;
      if (!locks.some((l) => l.field === f)) locks.push({ field: f, reason: 'set by a person', locked_at: now, locked_by: 'api' });
    }
    device.locked_fields = locks;
    const hidden = body.visible === false && device.visible;
    if (typeof body.visible === 'boolean') device.visible = body.visible;
    devices.put(device);
    events.emit('device_change', { serial, change: hidden ? 'hidden' : 'updated' });
    sendJson(res, 200, deviceJson(device));
  });
}
