// Device management (contract 4.2): save, save all, update what a person sets, delete.
import type { App } from '@tinyhttp/app';
import type { AgentContext } from '../context.js';
import { readJsonBody, requireString } from '../body.js';
import { sendJson, sendText } from '../respond.js';
import { deviceJson } from '../views.js';
import { formatTime } from '../../model/time.js';
import { applyDeviceEdit, parseDeviceEdit } from '../device-edit.js';
import { fromServerChannel } from '../../auth/gate.js';

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

  // The central server's device edits come this way too (device-edit.ts says what is applied).
  app.post('/devices/update', async (req, res) => {
    const body = await readJsonBody(req, res);
    if (!body) return;
    const serial = requireString(body, 'serial', res);
    if (serial === undefined) return;
    const viaServer = fromServerChannel(req);
    const edit = parseDeviceEdit(body, viaServer);
    if (typeof edit === 'string') return sendText(res, 400, edit);
    const current = devices.get(serial);
    if (!current) return sendText(res, 404, `no device with serial ${JSON.stringify(serial)}`);
    const device = applyDeviceEdit(current, edit, formatTime(ctx.now()), viaServer ? 'central server' : 'api');
    devices.put(device);
    const hidden = edit.visible === false && current.visible;
    events.emit('device_change', { serial, change: hidden ? 'hidden' : 'updated' });
    if (edit.ignored.length) {
      const ignored = edit.ignored.map((f) => f.slice(0, 64)).slice(0, 32);
      ctx.log.info({ serial, ignored, via: viaServer ? 'central server' : 'local' }, 'device edit: fields the box does not set were left as they were');
      res.setHeader('x-ignored-fields', ignored.map((f) => encodeURIComponent(f)).join(', '));
    }
    sendJson(res, 200, deviceJson(device));
  });
}
