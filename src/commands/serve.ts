// printbox-agent serve: the agent itself.
import { databasePath, loadConfig } from '../config/config.js';
import { createLogger, LogRing } from '../log/logger.js';
import { openPersistentLog } from '../log/persistent-log.js';
import { followLogLevel } from '../log/live-level.js';
import { openAgentDatabase, useServingBusyTimeout } from '../store/open-agent-db.js';
import { StorageGuard } from '../store/storage-guard.js';
import { ensureReserve } from '../store/reserve-file.js';
import { DeviceStore } from '../store/devices.js';
import { MetricsStore } from '../store/metrics.js';
import { SettingsTable } from '../store/settings-table.js';
import { AlertStore } from '../store/alerts.js';
import { AlertService, alertJson } from '../alerts/service.js';
import { boxIdentity } from '../alerts/box.js';
import { OutboxStore } from '../notify/outbox.js';
import { NotificationDispatcher } from '../notify/dispatcher.js';
import { SessionStore } from '../auth/sessions.js';
import { createHandler } from '../api/app.js';
import { RequestFacts } from '../auth/request-facts.js';
import { LoginLimiter } from '../auth/login-limiter.js';
import { HashQueue } from '../auth/hash-queue.js';
import { DeviceCookies, loadDeviceSecret } from '../auth/device-cookie.js';
import { dummyHash } from '../auth/passwords.js';
import { ensureSetupCode, setupCodePath } from '../auth/setup-code.js';
import { AccountStore } from '../store/accounts.js';
import type { AgentContext } from '../api/context.js';
import { ensureCertificate, pairStamp, tlsPaths, watchPair } from '../web/tls.js';
import { startListeners } from '../web/listeners.js';
import { notifyReady, notifyStopping, startWatchdog } from '../systemd/notify.js';
import { versionInfo } from '../shared/version.js';
import { EventBus } from '../events/bus.js';
import { SettingsStore } from '../settings/store.js';
import { settingsDefaults } from '../settings/settings.js';
import { ServerLink } from '../server/link.js';
import { DiscoveryService } from '../discovery/service.js';
import { startDiscoverySchedule } from '../discovery/schedule.js';
import { startRollupSchedule } from '../rollup/schedule.js';
import { startBillingSchedule } from '../billing/start.js';
import { startOrderListMail } from '../notify/order-list-mail.js';
import { UsbPrinters } from '../usb/service.js';
import { UpdateService } from '../update/service.js';
import { Rauc } from '../update/rauc.js';
import { urlSource } from '../update/source.js';
import { readProvisionState, watchProvisionState } from '../provision/state.js';
import { onFirstAnswer, StartupPhases } from '../log/startup-phases.js';
import { join } from 'node:path';
import { errorText } from '../shared/error-text.js';

/** Open alerts a heartbeat carries at most (newest first); `alerts_open` says how many there are. */
const HEARTBEAT_ALERTS = 50;

/** Background work starts after the first answer, or this long after READY when nobody asks. */
const BACKGROUND_START_MS = 5000;

/** SIGTERM -> exit: the longest the shutdown waits for work to end (see shutdown in run()). */
const SHUTDOWN_DEADLINE_MS = 4500;

export async function run(_args: string[], configPath: string | undefined): Promise<number> {
  const phases = new StartupPhases();
  const config = loadConfig(configPath);
  const logRing = new LogRing();
  const log = createLogger(config.log.level, logRing, openPersistentLog(config.data_dir));
  phases.mark('config');
  process.on('uncaughtException', (err) => {
    // State is unknown after this: log it and exit so systemd starts a clean process.
    log.fatal({ err: err.stack }, 'uncaught exception');
    process.exit(1);
  });

  const opened = openAgentDatabase(databasePath(config), config.data_dir, log);
  const db = opened.db;
  phases.mark('database');
  const devices = new DeviceStore(db, {
    onDuplicateReading: (s, storedId) =>
      log.debug({ serial: s.serial, ts: s.ts, stored_id: storedId }, 'a second reading of a device in the same millisecond ignored'),
  });
  const metrics = new MetricsStore(db);
  const events = new EventBus();
  const settings = new SettingsStore(db, settingsDefaults(config), (msg) => log.warn({ err: msg }, 'stored settings ignored'));
  followLogLevel(log, settings);
  const now = Date.now;
  const rollups: { makeRoom?: () => Promise<object> } = {};
  const probe = new SettingsTable(db);
  const storage = new StorageGuard({
    dataDir: config.data_dir,
    reserveBytes: config.storage.reserve_mb * 1024 * 1024,
    log,
    events,
    writeReadings: (readings) => devices.recordReadings(readings),
    probe: () => probe.set('storage_probe', String(Date.now())),
    makeRoom: async () => (rollups.makeRoom ? rollups.makeRoom() : {}),
  });
  if (opened.problem) storage.failed(opened.problem, 'opening the database');
  else {
    // Made once in a box's life, while at least the reserve threshold stays free beside it.
    try {
      ensureReserve(config.data_dir, config.storage.reserve_mb * 1024 * 1024);
    } catch (err) {
      storage.failed(err, 'making the reserve file'); // a read-only card; anything else is only logged
      log.warn({ err: errorText(err) }, 'no reserve file made');
    }
  }
  // Sessions live in the database (they outlast a restart); one the card cannot take lives in memory.
  const sessions = new SessionStore(db, Date.now, (err, doing) => {
    storage.failed(err, doing);
    log.warn({ err: err.message }, `${doing}: not written (the card takes no writes); kept in memory for this run`);
  });
  sessions.sweep();
  const sweep = setInterval(() => sessions.sweep(), 600_000);
  sweep.unref();
  const usb = new UsbPrinters({ devices, events, log, now, storage });
  const discovery = new DiscoveryService({ devices, settings, events, log, now, storage, usb });
  const facts = new RequestFacts(config.web.auth.trusted_proxies, (peer) =>
    log.debug({ peer }, 'forwarding headers from a peer outside web.auth.trusted_proxies ignored'),
  );
  const accounts = new AccountStore(db);
  const loginLimiter = new LoginLimiter();
  const hashQueue = new HashQueue();
  const deviceCookies = new DeviceCookies(
    loadDeviceSecret(config.data_dir, (err) =>
      log.warn({ err: errorText(err) }, 'device cookie secret kept in memory only: device cookies count until the next restart'),
    ),
  );
  void dummyHash(); // made now, so the first unknown name costs no more than later ones
  const alerts = new AlertStore(db);
  const box = boxIdentity(config.web.https_port);
  const alertService = new AlertService({ alerts, devices, metrics, events, settings, log, now, box });
  const outbox = new OutboxStore(db);
  const notifications = new NotificationDispatcher({
    outbox, settings, events, log, now, box: box.name, boxAddress: box.address, describe: (list) => alertService.describe(list), retryFirstMs: config.notifications.retry_first_ms, maxAttempts: config.notifications.max_attempts,
  });
  const ctx: AgentContext = {
    config, log, logRing, db, devices, metrics, sessions, facts, accounts, loginLimiter, hashQueue, deviceCookies, events, settings, discovery,
    storage, now, alerts, alertService, outbox, notifications,
  };
  try {
    if (config.web.auth.mode === 'password' && ensureSetupCode(accounts, config.data_dir)) {
      // The code itself goes to the console and the boot partition (printbox-provision), never to the log.
      log.warn({ setup_code_file: setupCodePath(config.data_dir) }, 'no account exists yet: sign in at /login with the setup code');
    }
  } catch (err) {
    // No room for a new code: the agent still serves (reads for a local admin); a restart with room makes it.
    if (!storage.failed(err, 'making the setup code')) throw err;
  }

  phases.mark('stores');
  const paths = tlsPaths(config);
  // The files as they were read, for the watch below (a pair this agent makes itself: as made).
  const before = pairStamp(paths);
  const pair = await ensureCertificate(paths, log);
  const loadedStamp = before === 'missing' ? pairStamp(paths) : before;
  phases.mark('certificate');
  useServingBusyTimeout(db);
  const handler = createHandler(ctx);
  const listeners = await startListeners(config, pair, handler, log);
  phases.mark('listen');
  phases.logAtFirstAnswer(listeners.https, log);
  const serverLink = new ServerLink({
    db, dbFile: databasePath(config), settings, devices, metrics, events, log, handler, caFile: config.server.ca_file,
    uploadBatchSize: config.server.upload_batch_size, uploadIntervalMs: config.server.upload_interval_ms,
    openAlerts: () => ({ alerts: alerts.list(false, HEARTBEAT_ALERTS).map(alertJson), open: alerts.counts().open }),
    commands: {
      discovery,
      // The update service takes the link as its source, so it is made after the link: the
      // commands ask for it when they run (the link starts below, once both exist).
      updates: (): UpdateService => updates,
      // The server's `restart`: the same shutdown as SIGTERM (writes end, the database closes), then
      // exit 0; the unit's Restart=always starts the agent again (without systemd nothing does).
      restart: (reason) => void shutdown(reason),
    },
  });
  ctx.serverLink = serverLink;
  const maxBundleBytes = config.update.max_bundle_mb * 1024 * 1024;
  const updates = new UpdateService({
    db, system: new Rauc(), events, log, now,
    dir: join(config.data_dir, 'update'),
    maxBundleBytes,
    keepFreeBytes: config.storage.reserve_mb * 1024 * 1024,
    source: () => {
      const url = settings.get().update.url;
      return url ? urlSource(url, maxBundleBytes) : serverLink.updateSource(maxBundleBytes);
    },
  });
  ctx.updates = updates;
  const stopWatch = watchPair(paths, (pair) => listeners.setCertificate(pair), log, loadedStamp);
  const stopWatchdog = startWatchdog(log);
  // Provisioning may run while the agent serves (a boot partition that appeared late): the
  // account is read from the database at each request; the settings it stored are read again here.
  const provisioned = (changed: boolean) =>
    log.info({ provisioning: readProvisionState(config.data_dir)?.message, settings_changed: changed }, 'provisioning ran');
  const stopProvisionWatch = watchProvisionState(config.data_dir, () => provisioned(settings.reload()));
  // A run that ended after the settings were first read but before the watch took its first look
  // (a first boot: both start together) is no change to the watch. It wrote the database before its
  // record, so one more read now, after that look, has whatever it stored.
  if (settings.reload()) provisioned(true);
  const rollupSchedule = startRollupSchedule(db, log);
  rollups.makeRoom = () => rollupSchedule.makeRoom();
  storage.start();
  // Before the alerts: those judged at start are heard, and messages a last run left are sent.
  notifications.start();
  alertService.start();
  phases.mark('ready');
  log.info({ version: versionInfo().version, data_dir: config.data_dir }, 'agent ready');
  notifyReady(log);
  let stopping = false;
  // What the first answer does not need starts once it has been sent (or BACKGROUND_START_MS
  // after READY when nobody asks): started before it, the scan at start-up, the listeners, the
  // server link and reading the update slots took the CPU while the first request waited
  // (seconds on a slow board or under TCG).
  let stopDiscovery = () => {};
  let stopBilling = () => {};
  let stopOrderListMail = () => {};
  let backgroundStarted = false;
  const startBackground = () => {
    clearTimeout(backgroundTimer);
    if (backgroundStarted || stopping) return;
    backgroundStarted = true;
    stopDiscovery = startDiscoverySchedule(discovery, settings, log, now);
    stopBilling = startBillingSchedule({ db, devices, metrics, discovery, settings, log, now });
    stopOrderListMail = startOrderListMail({ settings, devices, metrics, notifications, outbox, log, now });
    serverLink.start();
    // The slots are read (and an install begun before this start settled) while the agent serves.
    void updates.start();
  };
  // USB starts at READY, as it did before the rest was deferred: started right after the first
  // answer, the next request once stalled past the boot test's 10 s after a watchdog restart under
  // TCG, with a stalling USB printer attached (the native layer's load and the reads of the printers
  // already plugged in are the likely cause; not proven).
  void usb.start();
  const backgroundTimer = setTimeout(startBackground, BACKGROUND_START_MS);
  onFirstAnswer(listeners.https, () => setImmediate(startBackground));
  // SIGTERM -> exit within SHUTDOWN_DEADLINE_MS whatever the network does (the unit's
  // TimeoutStopSec is 20 s; systemd then SIGKILLs). First nothing new is taken: schedules stop, the
  // listeners close (connections in flight are cut: their requests were never acknowledged), the
  // server link stops. Every long operation is told to stop at the same moment and they end in
  // parallel: the scan and the polls close their SNMP sessions at once (no request timeout is
  // waited for), the roll-up pass ends between batches. If something is still busy at the
  // deadline it is named in the log and the process exits anyway after closing the database:
  // writes are synchronous transactions (never in progress while this runs), and a transaction
  // left open across awaits (an import) is rolled back by the close, so nothing is torn.
  const shutdown = async (cause: string) => {
    if (stopping) return;
    stopping = true;
    const t0 = Date.now();
    log.info({ cause }, 'shutting down');
    notifyStopping(log);
    clearTimeout(backgroundTimer);
    stopWatch();
    stopWatchdog();
    stopProvisionWatch();
    stopDiscovery();
    stopBilling();
    stopOrderListMail();
    updates.stop();
    alertService.stop();
    notifications.stop();
    storage.stop();
    const parts: [string, () => Promise<void>][] = [
      ['http listeners', () => listeners.close()],
      ['server link', () => serverLink.stop()],
      ['roll-up pass', () => rollupSchedule.stop()],
      ['discovery', () => discovery.stop()],
      ['usb printers', () => usb.stop()],
    ];
    const busy = new Set(parts.map(([name]) => name));
    const all = Promise.all(
      parts.map(([name, stop]) =>
        (async () => stop())() // called now, in this order
          .catch((err: unknown) => log.error({ part: name, err: errorText(err) }, 'error while stopping'))
          .finally(() => busy.delete(name)),
      ),
    );
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<'deadline'>((r) => (timer = setTimeout(() => r('deadline'), SHUTDOWN_DEADLINE_MS)));
    const outcome = await Promise.race([all.then(() => 'done' as const), deadline]);
    clearTimeout(timer);
    if (outcome === 'deadline') {
      const still = [...busy].map((name) => (name === 'discovery' ? `discovery (${discovery.busy().join(', ') || 'ending'})` : name));
      log.warn({ busy: still, ms: Date.now() - t0 }, 'shutdown deadline reached: exiting with these still busy');
    }
    try {
      db.close(); // rolls back a transaction still open
    } catch (err) {
      // e.g. a backup export's statement still iterating: nothing is written then; the OS closes the file.
      log.warn({ err: errorText(err) }, 'database not closed cleanly');
    }
    log.info({ ms: Date.now() - t0 }, 'stopped');
    process.exit(0);
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
  return -1; // keeps running
}
