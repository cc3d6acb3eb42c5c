// POST /api/report and POST /api/report/stream: a device's diagnostic report, for the "Report a
// problem" form of the central server's UI (the same request body as the reference agent's).
// The reference sends the report to a third-party service that files it publicly; the box sends
// it nowhere. It answers in the reference's own "fallback" shape (fallback: true, the whole
// report), which the UI handles by handing the report to the person as a file: they decide where
// it goes. /stream sends the same answer as a `complete` event after `progress` events, with an
// SNMP read of the printer first when full_walk is asked for.
import type { App } from '@tinyhttp/app';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import type { AgentContext } from '../context.js';
import { readJsonBody } from '../body.js';
import { sendJson, sendText } from '../respond.js';
import { deviceJson, snapshotJson } from '../views.js';
import { formatTime } from '../../model/time.js';
import { versionInfo } from '../../shared/version.js';
import { readHost } from '../../snmp/scan.js';
import { parseIPv4 } from '../../shared/ranges.js';
import { readPlan } from '../../snmp/parse/printer.js';
import { credentialsOf } from '../../discovery/snmp-observation.js';
import type { OidValues } from '../../snmp/types.js';
import { errorText } from '../../shared/error-text.js';

const BODY_LIMIT = 1024 * 1024;
const ISSUE_TYPES = ['wrong_manufacturer', 'wrong_model', 'missing_serial', 'wrong_serial', 'incorrect_counters', 'missing_toner', 'missing_supplies', 'wrong_hostname', 'other'];
const METRICS_KEPT = 100;
const LOG_LINES = 200;
const RECENT_LOG_LINES = 50;
const SNMP_VALUES_KEPT = 5000;
const NOT_SENT = 'not sent: PrintBox sends diagnostic reports to no third party; the report is returned for you to keep or attach where you choose';

// The request's fields copied into the report as they came (the reference's ReportRequest).
const COPIED_STRINGS = [
  'expected_value', 'user_message', 'device_ip', 'device_serial', 'device_model', 'device_mac', 'current_manufacturer',
  'current_model', 'current_serial', 'current_hostname', 'firmware', 'subnet_mask', 'gateway', 'discovery_method',
  'web_ui_url', 'device_type', 'source_type', 'port_name', 'driver_name', 'spooler_status', 'detected_vendor',
];
const COPIED_OTHER = [
  'current_page_count', 'consumables', 'status_messages', 'is_usb', 'is_default', 'is_shared', 'color_pages', 'mono_pages',
  'scan_count', 'toner_levels', 'raw_data', 'detection_steps', 'snmp_responses',
];

type Progress = (stage: string, percent: number, message: string, extra?: Record<string, unknown>) => void;

export function register(app: App, ctx: AgentContext): void {
  app.post('/api/report', async (req, res) => {
    const body = await readReport(req, res);
    if (!body) return;
    const report = await buildReport(ctx, body, () => undefined);
    sendJson(res, 200, answer(report));
  });

  app.post('/api/report/stream', async (req, res) => {
    const body = await readReport(req, res);
    if (!body) return;
    res.statusCode = 200;
    res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
    res.setHeader('Cache-Control', 'no-cache');
    res.setHeader('X-Accel-Buffering', 'no');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    const send = (event: string, data: unknown) => {
      if (!res.destroyed) res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    };
    const report = await buildReport(ctx, body, (stage, percent, message, extra) => send('progress', { stage, percent, message, ...extra }));
    send('complete', answer(report));
    res.end();
  });
}

async function readReport(req: IncomingMessage, res: ServerResponse): Promise<Record<string, unknown> | undefined> {
  const body = await readJsonBody(req, res, BODY_LIMIT);
  if (!body) return undefined;
  const issue = body.issue_type;
  if (typeof issue !== 'string' || issue.trim() === '') return void sendText(res, 400, 'issue_type is required');
  for (const f of COPIED_STRINGS) {
    if (body[f] !== undefined && typeof body[f] !== 'string') return void sendText(res, 400, `field ${f} must be a string`);
  }
  if (body.full_walk !== undefined && typeof body.full_walk !== 'boolean') return void sendText(res, 400, 'field full_walk must be true or false');
  return body;
}

function answer(report: Record<string, unknown>): Record<string, unknown> {
  return { success: false, fallback: true, error: NOT_SENT, report };
}

async function buildReport(ctx: AgentContext, body: Record<string, unknown>, progress: Progress): Promise<Record<string, unknown>> {
  progress('starting', 0, 'Preparing report...');
  const v = versionInfo();
  const issue = String(body.issue_type).trim().toLowerCase();
  const report: Record<string, unknown> = {
    report_id: typeof body.report_id === 'string' && body.report_id ? body.report_id : `RPT-${Date.now().toString(16).toUpperCase()}-${randomBytes(2).toString('hex').toUpperCase()}`,
    timestamp: formatTime(ctx.now()),
    agent_version: v.version,
    os: v.os,
    arch: v.arch,
    issue_type: ISSUE_TYPES.includes(issue) ? issue : 'other',
  };
  for (const f of [...COPIED_STRINGS, ...COPIED_OTHER]) {
    const x = body[f];
    if (x !== undefined && x !== null && x !== '' && x !== false) report[f] = x;
  }

  const serial = typeof body.device_serial === 'string' ? body.device_serial : '';
  const device = serial ? ctx.devices.get(serial) : undefined;
  const ip = typeof body.device_ip === 'string' && body.device_ip ? body.device_ip : device?.ip;
  if (body.full_walk === true && ip && !device?.is_usb) {
    const values = await walk(ctx, ip, progress);
    if (values) {
      report.snmp_responses = [...values].slice(0, SNMP_VALUES_KEPT).map(([oid, val]) => snmpResponse(oid, val));
    }
  }

  progress('building', 90, 'Building report...');
  if (device) {
    report.device_record = deviceJson(device);
    const now = ctx.now();
    const history = ctx.metrics.history(device.serial, now - 183 * 86_400_000, now, now);
    report.metrics_history = history.slice(-METRICS_KEPT).map((s) => snapshotJson(s));
  }
  const logs = ctx.logRing.all().map((r) => JSON.stringify(r));
  if (logs.length) {
    report.recent_logs = logs.slice(-RECENT_LOG_LINES);
    report.agent_logs = logs.slice(-LOG_LINES);
  }
  return report;
}

/** The printer's values as a poll reads them; undefined when it did not answer (said in progress). */
async function walk(ctx: AgentContext, ip: string, progress: Progress): Promise<OidValues | undefined> {
  if (parseIPv4(ip) === null) {
    progress('warning', 90, `Not read: ${ip} is not an IPv4 address`);
    return undefined;
  }
  progress('connecting', 5, 'Connecting to device...');
  const s = ctx.settings.get();
  try {
    progress('walking', 10, 'Reading the device over SNMP...');
    const host = await readHost(ip, {
      credentials: credentialsOf(s),
      timeoutMs: s.discovery.snmp_timeout_ms,
      allowedRanges: s.discovery.allowed_ranges,
      port: s.snmp.port,
      planRead: readPlan,
    });
    if (!host) {
      progress('warning', 90, 'Could not connect to device for SNMP walk');
      return undefined;
    }
    progress('walked', 85, `Read ${host.values.size} values`, { oids_found: host.values.size });
    return host.values;
  } catch (err) {
    progress('warning', 90, `SNMP read failed: ${errorText(err)}`);
    return undefined;
  }
}

function snmpResponse(oid: string, v: { type: string; value: unknown }): Record<string, string> {
  const out: Record<string, string> = { oid, type: v.type, value: '' };
  if (Buffer.isBuffer(v.value)) {
    out.value = v.value.toString('latin1').replace(/[^\x20-\x7e]/g, '.');
    out.hex_value = v.value.toString('hex');
  } else if (v.value !== null && v.value !== undefined) out.value = String(v.value);
  return out;
}
