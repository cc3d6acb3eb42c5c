// POST /devices/preview {serial?, ip?}: reads a printer now and answers what it reports,
// {"proposed": {...}} with the reference's fields, without writing anything (the central server's
// "Refresh details" button compares them with the record and applies what a person picks through
// /devices/update). The address is the record's when the serial is known and no ip is given; any
// address read must be IPv4 and inside discovery.allowed_ranges (snmp/scan.ts refuses the others).
import type { App } from '@tinyhttp/app';
import type { AgentContext } from '../context.js';
import { readJsonBody } from '../body.js';
import { sendJson, sendText } from '../respond.js';
import { readHost } from '../../snmp/scan.js';
import { parseIPv4 } from '../../shared/ranges.js';
import { parsePrinter, readPlan } from '../../snmp/parse/printer.js';
import { credentialsOf } from '../../discovery/snmp-observation.js';

// The reference's list: what the server's UI compares with the record.
const PROPOSED_FIELDS = [
  'ip', 'manufacturer', 'model', 'hostname', 'firmware', 'subnet_mask', 'gateway', 'dns_servers', 'dhcp_server',
  'asset_number', 'location', 'description', 'web_ui_url',
] as const;

export function register(app: App, ctx: AgentContext): void {
  app.post('/devices/preview', async (req, res) => {
    const body = await readJsonBody(req, res);
    if (!body) return;
    for (const f of ['serial', 'ip'] as const) {
      if (body[f] !== undefined && typeof body[f] !== 'string') return sendText(res, 400, `field ${f} must be a string`);
    }
    const serial = ((body.serial as string | undefined) ?? '').trim();
    let ip = ((body.ip as string | undefined) ?? '').trim();
    const device = serial ? ctx.devices.get(serial) : undefined;
    if (serial && !device && !ip) return sendText(res, 404, `no device with serial ${JSON.stringify(serial)}`);
    if (device?.is_usb) return sendText(res, 409, `device ${JSON.stringify(serial)} is a USB printer: it is read through /devices/metrics/collect`);
    if (!ip) ip = device?.ip ?? '';
    if (!ip) return sendText(res, 400, 'ip required (or the serial of a known device)');
    if (parseIPv4(ip) === null) return sendText(res, 400, `field ip must be an IPv4 address, got ${JSON.stringify(ip)}`);

    const s = ctx.settings.get();
    let host;
    try {
      host = await readHost(ip, {
        credentials: credentialsOf(s),
        timeoutMs: s.discovery.snmp_timeout_ms,
        allowedRanges: s.discovery.allowed_ranges,
        port: s.snmp.port,
        planRead: readPlan,
      });
    } catch (err) {
      const e = err as Error & { kind?: string };
      if (/allowed_ranges/.test(e.message)) return sendText(res, 403, e.message);
      return sendText(res, 502, `reading ${ip} failed: ${e.message}`);
    }
    if (!host) return sendText(res, 504, `no SNMP answer from ${ip}`);
    const info = parsePrinter(host.values, ip, new Date(ctx.now())).info as unknown as Record<string, unknown>;
    const proposed: Record<string, unknown> = {};
    for (const f of PROPOSED_FIELDS) {
      const v = f === 'ip' ? ip : f === 'asset_number' ? (info.asset_number ?? info.asset_id) : info[f];
      if (v !== undefined && v !== '' && !(Array.isArray(v) && v.length === 0)) proposed[f] = v;
    }
    sendJson(res, 200, { proposed });
  });
}
