// The box's link to its central server (server-protocol.md): enrollment, heartbeat with managed
// settings, uploads, and the WebSocket channel that carries the server's HTTP requests and
// commands. The server URL and enrollment token are settings (TOML `[server]`, provisioning,
// POST /settings, or the server's own managed settings); a change restarts the link.
import { readFileSync, statSync } from 'node:fs';
import os from 'node:os';
import type { Logger } from '../log/logger.js';
import type { EventBus } from '../events/bus.js';
import type { SettingsStore } from '../settings/store.js';
import { SettingsError } from '../settings/settings.js';
import type { DeviceStore } from '../store/devices.js';
import type { MetricsStore } from '../store/metrics.js';
import type { DB } from '../store/db.js';
import type { Handler } from '../api/app.js';
import { versionInfo } from '../shared/version.js';
import { ServerClient, ServerHttpError, type TrustedCas } from '../net/http-client.js';
import { trustedCas } from '../net/ca-pem.js';
import { LinkStore } from '../store/server-link.js';
import { Uploader } from './uploader.js';
import { ServerChannel, type Envelope } from './channel.js';
import { ChannelRequests } from './channel-requests.js';
import { Backoff, OncePer } from '../shared/backoff.js';
import type { LinkState, LinkStatus } from '../events/payloads.js';
import type { UpdateSource } from '../update/service.js';
import { askingFor } from '../update/source.js';
import { parseOffer } from '../update/manifest.js';
import { mapManagedSettings } from './managed-settings.js';
import { inheritedKeyProblem } from '../model/inherited-keys.js';
import { ServerCommands, type UpdateCommands, type LinkCommands } from './commands.js';
import type { UpdateProgress } from '../events/payloads.js';
import { parseCredentials, type PrinterCredentials } from '../printer-web/auto-login.js';
import { errorText } from '../shared/error-text.js';

export const PROTOCOL_VERSION = '1';

export interface LinkOptions {
  db: DB;
  dbFile: string;
  settings: SettingsStore;
  devices: DeviceStore;
  metrics: MetricsStore;
  /** What the server's commands run: a scan, a read, the update service, a restart. */
  commands: LinkCommands;
  events: EventBus;
  log: Logger;
  handler: Handler;
  /** `server.ca_file`: the only CA trusted for the server, when set. */
  caFile: string;
  uploadBatchSize?: number;
  uploadIntervalMs?: number;
  heartbeatMs?: number;
  /** Open alerts sent with each heartbeat (alerts/service.ts), newest first and bounded; the reference server ignores fields it does not know. */
  openAlerts?: () => { alerts: unknown[]; open: number };
}

const HEARTBEAT_MS = 60_000;
/**
 * Least time between two "the server is back" redials (and upload retries) set off by heartbeats:
 * a server that answers HTTP but drops every WebSocket costs at most one extra dial this often.
 */
export const SERVER_BACK_MS = 30_000;

export class ServerLink {
  private readonly store: LinkStore;
  private readonly uploader: Uploader;
  private readonly channel: ServerChannel;
  private readonly requests: ChannelRequests;
  private readonly commands: ServerCommands;
  /** `server.ca_file`'s CA (read once at start: a config file, changed by a restart). */
  private readonly fileCa: Buffer | undefined;
  /** The `server.ca_pem` the link last (re)started with. */
  private caPem = '';
  private client: ServerClient | undefined;
  private url = '';
  /** The enrollment token the link last (re)started with. */
  private enrollmentToken = '';
  private state: LinkState = 'off';
  private lastError: string | undefined;
  private lastHeartbeat: string | undefined;
  private lastUpload: string | undefined;
  /** The last upload's failure, until an upload goes through: the link is `failing` meanwhile. */
  private uploadError: string | undefined;
  private rejectedSettingsVersion = '';
  private settingsError: { version: string; error: string } | undefined;
  /** Managed fields of the applied snapshot that mean nothing on the box. */
  private settingsUnmapped: string[] = [];
  /** What the server is told of the last snapshot refused or applied in part (reportSettings). */
  private settingsReport: { version: string; text: string; sent: boolean } | undefined;
  private readonly retry = new Backoff();
  private readonly serverBack = new OncePer(SERVER_BACK_MS);
  private registerTimer: NodeJS.Timeout | undefined;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private readonly startedAt = Date.now();
  private readonly stops: (() => void)[] = [];
  private lastStatusJson = '';
  private stopped = false;
  /** Counts restarts: work begun before the latest one is stale. */
  private generation = 0;

  constructor(private readonly o: LinkOptions) {
    this.store = new LinkStore(o.db);
    this.fileCa = o.caFile ? readCa(o.caFile) : undefined;
    this.uploader = new Uploader({
      store: this.store,
      devices: o.devices,
      metrics: o.metrics,
      log: o.log,
      session: () => this.session(),
      onRejected: (token) => this.tokenRefused(token),
      onProgress: (p) => {
        if (p.ok) this.lastUpload = new Date().toISOString();
        this.uploadError = p.ok ? undefined : p.error;
        if (!p.ok) this.lastError = `upload failed: ${p.error}`;
        else if (this.lastError?.startsWith('upload failed')) this.lastError = undefined;
        this.changed();
      },
      batchSize: o.uploadBatchSize ?? 100,
      minIntervalMs: o.uploadIntervalMs ?? 1_000,
    });
    this.requests = new ChannelRequests({
      handler: o.handler,
      log: o.log,
      send: (type, data) => this.channel.send(type, data),
      buffered: () => this.channel.buffered,
    });
    const restart = o.commands.restart;
    this.commands = new ServerCommands({
      discovery: o.commands.discovery,
      updates: o.commands.updates,
      // The server shows the agent's status from its heartbeats: it reads `restarting` until the
      // new process's first heartbeat; the channel's close (flushed first) says it went away.
      restart: restart && ((reason) => {
        this.channel.send('heartbeat', { ...this.heartbeatData(), status: 'restarting' });
        restart(reason);
      }),
      send: (type, data) => this.channel.send(type, data),
      log: o.log,
    });
    this.channel = new ServerChannel({
      url: () => this.channelUrl(),
      ca: () => this.trust(),
      log: o.log,
      onOpen: () => {
        this.state = 'online';
        this.changed();
        this.sendWsHeartbeat();
        this.reportSettings();
      },
      onClose: () => {
        this.requests.abortAll();
        if (this.state === 'online') this.state = 'offline';
        this.changed();
      },
      onFrame: (f) => this.frame(f),
      // Logged only: the reference server knows no `error` frame from an agent (it would answer with one).
      onBadFrame: (reason) => this.o.log.warn({ reason }, 'malformed frame from the server'),
      onRejected: (url) => this.tokenRefused(new URL(url).searchParams.get('token') ?? ''),
    });
  }

  start(): void {
    this.stops.push(
      this.o.settings.onChange((s) => {
        if (s.server.url !== this.url || s.server.ca_pem !== this.caPem || this.enrollmentChanged(s.server.enrollment_token)) this.restart();
      }),
      this.o.events.subscribe((name, data) => {
        // The server follows an update it asked for (or any other) as update_progress frames, in its form.
        if (name === 'update_progress') return this.commands.progress(data as UpdateProgress);
        // A collect the server asked for with async=true reports its progress as the reference agent does.
        if (name === 'job_progress') return void this.channel.send('job_progress', data as unknown as Record<string, unknown>);
        if (name !== 'device_change') return;
        const { serial, change } = data as { serial: string; change: string };
        // A reading goes with its device again: the server's Last Seen is its devices batch's time.
        if (change === 'deleted') {
          this.uploader.forget(serial);
          this.deleted(serial);
        } else this.uploader.noteDevice(serial);
      }),
    );
    this.restart();
  }

  /**
   * While unregistered, a new enrollment token (or the same one again after a refusal) registers
   * at once. Any other settings change leaves a registration under way alone: a second one would
   * race it, and the server keeps only the token it issued last.
   */
  private enrollmentChanged(token: string): boolean {
    if (this.store.get().agent_token || !token) return false;
    return token !== this.enrollmentToken || this.state === 'rejected';
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const s of this.stops.splice(0)) s();
    await this.halt();
  }

  status(): LinkStatus {
    const s = this.store.get();
    return {
      // Registered and heard, but the server refuses what the box sends: not `online`.
      state: this.state === 'online' && this.uploadError ? 'failing' : this.state,
      agent_id: s.agent_id,
      registered: s.agent_token !== '',
      channel_connected: this.channel.connected,
      backlog: this.url ? this.uploader.backlog() : 0,
      ...(this.lastHeartbeat ? { last_heartbeat_at: this.lastHeartbeat } : {}),
      ...(this.lastUpload ? { last_upload_at: this.lastUpload } : {}),
      settings_version: s.settings_version,
      ...(this.settingsUnmapped.length ? { settings_unmapped: this.settingsUnmapped } : {}),
      ...(this.uploadError ? { upload_error: this.uploadError } : {}),
      ...(this.lastError ? { last_error: this.lastError } : {}),
    };
  }

  /**
   * The CAs the server's certificate is checked against: `server.ca_file`'s alone when set (the
   * operator's choice: that CA only), else the system's; and `server.ca_pem` beside either, applied
   * at the link's next (re)start, which a change of it causes.
   */
  private trust(): TrustedCas | undefined {
    if (this.fileCa) return this.caPem ? [this.fileCa, this.caPem] : this.fileCa;
    return trustedCas(this.caPem);
  }

  /** Emits `server_status` when what the status says has changed (not on every backlog tick). */
  private changed(): void {
    const status = this.status();
    const { backlog: _b, ...rest } = status;
    const json = JSON.stringify(rest);
    if (json === this.lastStatusJson) return;
    this.lastStatusJson = json;
    this.o.events.emit('server_status', status);
  }

  private async halt(): Promise<void> {
    clearTimeout(this.registerTimer);
    clearInterval(this.heartbeatTimer);
    const closed = this.channel.stop();
    this.requests.abortAll();
    await closed;
    await this.uploader.stop();
  }

  private restart(): void {
    const generation = ++this.generation;
    void this.halt().then(() => {
      if (this.stopped || generation !== this.generation) return;
      const { url, enrollment_token, ca_pem } = this.o.settings.get().server;
      this.url = url;
      this.caPem = ca_pem;
      this.enrollmentToken = enrollment_token;
      this.retry.reset();
      this.lastError = undefined;
      this.uploadError = undefined;
      if (!url) {
        this.client = undefined;
        this.state = 'off';
        this.changed();
        return;
      }
      this.client = new ServerClient(url, this.trust());
      this.store.useServer(url);
      this.state = 'registering';
      this.changed();
      this.ensureRegistered();
    });
  }

  /**
   * The central server as an update source (docs/updates.md): POST /api/v1/agents/update/manifest
   * answers an offer or nothing. The agent token goes with the download only to the server itself.
   */
  updateSource(maxBundleBytes: number): UpdateSource | undefined {
    const s = this.session();
    if (!s) return undefined;
    const base = this.url.endsWith('/') ? this.url : this.url + '/';
    return {
      name: 'the central server',
      offer: async (signal) => {
        const r = await s.client.post('api/v1/agents/update/manifest', { agent_id: s.agentId, component: 'agent', ...askingFor() }, { token: s.token, signal });
        return parseOffer(r.json, base, maxBundleBytes);
      },
      access: { ca: this.trust(), authorization: `Bearer ${s.token}`, authorizedOrigin: new URL(base).origin },
    };
  }

  /**
   * The web credentials the server keeps for a printer (GET /api/v1/agents/device-credentials, as
   * PrintMaster's agent asks), for signing in to its page when the server proxies it. Undefined
   * when not registered or none are stored; the server gives them only for this agent's devices.
   */
  async deviceCredentials(serial: string, signal?: AbortSignal): Promise<PrinterCredentials | undefined> {
    const s = this.session();
    if (!s) return undefined;
    const r = await s.client.get(`api/v1/agents/device-credentials?serial=${encodeURIComponent(serial)}`, { token: s.token, signal });
    return parseCredentials(r.json);
  }

  private session(): { client: ServerClient; token: string; agentId: string } | undefined {
    const s = this.store.get();
    return this.client && s.agent_token ? { client: this.client, token: s.agent_token, agentId: s.agent_id } : undefined;
  }

  private channelUrl(): string | undefined {
    const s = this.store.get();
    if (!this.url || !s.agent_token) return undefined;
    const u = new URL('api/v1/agents/ws', this.url.endsWith('/') ? this.url : this.url + '/');
    u.protocol = u.protocol === 'http:' ? 'ws:' : 'wss:';
    u.searchParams.set('token', s.agent_token);
    return u.toString();
  }

  private ensureRegistered(): void {
    if (this.store.get().agent_token) return this.linked();
    // A restart (new URL, stop) while the call is out makes its answer stale: it is dropped.
    const generation = this.generation;
    const current = () => !this.stopped && generation === this.generation;
    void this.register(current).then(
      () => {
        if (!current()) return;
        this.retry.reset();
        this.linked();
      },
      (err: unknown) => {
        if (!current()) return;
        const message = errorText(err);
        const refused = err instanceof ServerHttpError && (err.status === 401 || err.status === 403);
        this.state = refused ? 'rejected' : 'registering';
        this.lastError = refused ? `registration refused: ${message}` : `registration failed: ${message}`;
        const wait = this.retry.next();
        this.o.log.warn({ err: message, retry_s: Math.round(wait / 1000) }, 'server registration failed');
        this.changed();
        clearTimeout(this.registerTimer);
        this.registerTimer = setTimeout(() => this.ensureRegistered(), wait);
        this.registerTimer.unref();
      },
    );
  }

  private async register(current: () => boolean): Promise<void> {
    const settings = this.o.settings.get();
    const s = this.store.get();
    const v = versionInfo();
    const name = os.hostname();
    const client = this.client!;
    // What the server shows of the box from the first moment (not only after a WebSocket heartbeat).
    const facts = {
      protocol_version: PROTOCOL_VERSION, hostname: name, ip: primaryAddress(), platform: v.os, os_version: os.release(),
      architecture: v.arch, build_type: v.build_type, git_commit: v.git_commit,
    };
    if (settings.server.enrollment_token) {
      const r = await client.post('/api/v1/agents/register-with-token', {
        token: settings.server.enrollment_token, agent_id: s.agent_id, name, agent_version: v.version, ...facts,
      });
      const token = r.json.agent_token;
      if (typeof token !== 'string' || !token) throw new Error('register-with-token answer has no agent_token');
      if (!current()) return;
      this.store.registered(this.url, token, typeof r.json.tenant_id === 'string' ? r.json.tenant_id : '');
      // The reference server's answer carries its managed settings already.
      this.applyManaged(r.json);
    } else {
      const r = await client.post('/api/v1/agents/register', { agent_id: s.agent_id, name, version: v.version, ...facts });
      const token = r.json.token;
      if (typeof token !== 'string' || !token) throw new Error('register answer has no token');
      if (!current()) return;
      this.store.registered(this.url, token, '');
    }
    this.o.log.info({ agent_id: s.agent_id }, 'registered with the server');
  }

  /** Registered: heartbeat, uploads and the channel run until the token is refused or the URL changes. */
  private linked(): void {
    this.state = 'offline';
    this.changed();
    this.uploader.start();
    this.channel.start();
    void this.heartbeat();
    clearInterval(this.heartbeatTimer);
    this.heartbeatTimer = setInterval(() => void this.heartbeat(), this.o.heartbeatMs ?? HEARTBEAT_MS);
    this.heartbeatTimer.unref();
  }

  /**
   * A refusal counts only for the token it refused: an answer to a call made with a token the
   * box has since replaced (a registration meanwhile) must not drop the new one.
   */
  private tokenRefused(token: string): void {
    if (!token || this.store.get().agent_token !== token) return;
    this.o.log.warn('the server refused the agent token: registering again');
    this.store.dropToken();
    this.restart();
  }

  private heartbeatData(): Record<string, unknown> {
    const v = versionInfo();
    return {
      device_count: this.o.devices.listSaved().length,
      status: 'active',
      version: v.version,
      protocol_version: PROTOCOL_VERSION,
      hostname: os.hostname(),
      ip: primaryAddress(),
      platform: v.os,
      os_version: os.release(),
      architecture: v.arch,
      build_type: v.build_type,
      git_commit: v.git_commit,
      db_size_bytes: fileSize(this.o.dbFile),
      uptime: Math.round((Date.now() - this.startedAt) / 1000),
      settings_version: this.store.get().settings_version,
      backlog: this.uploader.backlog(),
      ...this.alertsData(),
    };
  }

  private alertsData(): Record<string, unknown> {
    try {
      const a = this.o.openAlerts?.();
      return a ? { alerts: a.alerts, alerts_open: a.open } : {};
    } catch (err) {
      this.o.log.warn({ err: errorText(err) }, 'open alerts not read for the heartbeat');
      return {};
    }
  }

  private sendWsHeartbeat(): void {
    this.channel.send('heartbeat', this.heartbeatData());
  }

  /** HTTP heartbeat (it carries managed settings), and a WebSocket one while connected. */
  private async heartbeat(): Promise<void> {
    const session = this.session();
    if (!session) return;
    this.sendWsHeartbeat();
    try {
      const r = await session.client.post(
        '/api/v1/agents/heartbeat',
        { agent_id: session.agentId, timestamp: new Date().toISOString(), ...this.heartbeatData(),
          ...(this.settingsError ? { settings_error: this.settingsError } : {}),
          ...(this.settingsUnmapped.length ? { settings_unmapped: this.settingsUnmapped } : {}) },
        { token: session.token },
      );
      this.lastHeartbeat = new Date().toISOString();
      this.lastError = undefined;
      this.serverAnswered();
      if (this.state === 'offline' || this.state === 'registering') this.state = this.channel.connected ? 'online' : 'offline';
      const news = this.applyManaged(r.json);
      this.changed();
      // The server learns of an applied (or refused) snapshot at once, not a heartbeat later.
      if (news) void this.heartbeat();
    } catch (err) {
      if (err instanceof ServerHttpError && (err.status === 401 || err.status === 403)) return this.tokenRefused(session.token);
      this.lastError = `heartbeat failed: ${errorText(err)}`;
      if (!this.channel.connected) this.state = 'offline';
      this.changed();
    }
  }

  /**
   * A heartbeat went through: what waits for the server to be back (the channel's redial, a failed
   * upload's retry) goes now rather than at the end of its backoff, which may be minutes after an
   * outage (the channel came back 3.5 min after the server). Bounded by `serverBack`.
   */
  private serverAnswered(): void {
    const redial = this.channel.waiting;
    const retry = this.uploadError !== undefined;
    if (!(redial || retry) || !this.serverBack.take()) return;
    if (redial) {
      this.o.log.info('the server answered a heartbeat: dialling its channel now');
      this.channel.redialNow();
    }
    if (retry) this.uploader.kick();
  }

  /**
   * Managed settings (server-protocol.md, Heartbeat): the server's snapshot is in PrintMaster's
   * schema; what maps onto the box's settings goes through the same validation as POST /settings,
   * all or nothing; fields that mean nothing here are reported (status, log, next heartbeat).
   * The version sent back is the one applied, so a refused snapshot is offered again; it is tried
   * once. Returns whether a new snapshot was applied or refused.
   */
  private applyManaged(reply: Record<string, unknown>): boolean {
    const version = reply.settings_version;
    const snapshot = reply.settings_snapshot;
    if (typeof version !== 'string' || !version || version === this.store.get().settings_version || snapshot === undefined) return false;
    if (version === this.rejectedSettingsVersion) return false;
    const refuse = (error: string): boolean => {
      this.rejectedSettingsVersion = version;
      this.settingsError = { version, error };
      this.lastError = `managed settings ${version.slice(0, 12)} refused: ${error}`;
      this.o.log.warn({ settings_version: version, err: error }, 'managed settings refused; nothing changed');
      this.settingsReport = { version, text: `refused by the box, nothing changed: ${error}`, sent: false };
      this.reportSettings();
      return true;
    };
    const inherited = inheritedKeyProblem(snapshot);
    if (inherited) return refuse(inherited);
    const { patch, unmapped } = mapManagedSettings(snapshot);
    try {
      this.o.settings.update(patch);
    } catch (err) {
      if (!(err instanceof SettingsError)) throw err;
      return refuse(err.message);
    }
    this.store.setSettingsVersion(version);
    this.settingsError = undefined;
    this.settingsUnmapped = unmapped;
    if (unmapped.length) this.o.log.warn({ settings_version: version, unmapped }, 'managed settings applied; these fields were left as they were');
    else this.o.log.info({ settings_version: version }, 'managed settings applied');
    this.settingsReport = unmapped.length ? { version, text: `applied but for these fields, left as they were: ${unmapped.join('; ')}`, sent: false } : undefined;
    this.reportSettings();
    return true;
  }

  /**
   * A snapshot refused, or fields of it left as they were, where the server shows it. PrintMaster's
   * server reads no settings outcome from an agent (its heartbeat takes only status and version
   * facts; settings_error and settings_unmapped there are for servers that read them); the one agent
   * report it shows is a failed `job_progress` frame, which it writes to its log ("Agent job
   * failed", with the job and the error) and its UI's Logs page lists. Sent once per snapshot, when
   * the channel is up (at once, or when it opens).
   */
  private reportSettings(): void {
    const r = this.settingsReport;
    if (!r || r.sent) return;
    const v = r.version.slice(0, 12);
    r.sent = this.channel.send('job_progress', {
      job_id: `managed-settings-${v}`,
      job_type: 'managed_settings',
      status: 'failed',
      error: `managed settings ${v} ${r.text}`.slice(0, 2000),
    });
  }

  private deleted(serial: string): void {
    // A delete the server asked for is not reported back to it.
    if (this.requests.deletedByServer(serial)) return;
    this.channel.send('device_deleted', { serial });
  }

  private frame(f: Envelope): void {
    const data = f.data ?? {};
    switch (f.type) {
      case 'proxy_request':
        return this.requests.handle(data);
      case 'command':
        // Each handled or answered in a form the server shows (commands.ts).
        return void this.commands.run(data);
      case 'proxy_cancel':
      case 'proxy_stream_end':
        // The server is done with a stream (or gives up on a request).
        return this.requests.cancel(String(data.request_id ?? ''));
      case 'heartbeat':
      case 'pong':
        return;
      case 'error':
        this.o.log.warn({ message: String(data.message ?? '') }, 'the server reported an error');
        return;
      default:
        this.o.log.warn({ type: String(f.type).slice(0, 64) }, 'unknown frame type from the server');
    }
  }
}

function readCa(file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    throw new Error(`config key server.ca_file: cannot read ${file}: ${errorText(err)}`);
  }
}

function fileSize(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

/** The first non-internal IPv4 address, for registration's `ip`. */
function primaryAddress(): string {
  for (const list of Object.values(os.networkInterfaces())) {
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return '';
}

