// printbox-agent serve: the agent itself.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { databasePath, loadConfig } from '../config/config.js';
import { createLogger, LogRing } from '../log/logger.js';
import { openDatabase } from '../store/db.js';
import { DeviceStore } from '../store/devices.js';
import { MetricsStore } from '../store/metrics.js';
import { SessionStore } from '../auth/sessions.js';
import { createApp } from '../api/app.js';
import type { AgentContext } from '../api/context.js';
import { ensureCertificate, loadPair, tlsPaths, watchPair } from '../web/tls.js';
import { startListeners } from '../web/listeners.js';
import { notifyReady, notifyStopping, startWatchdog } from '../systemd/notify.js';
import { versionInfo } from '../version.js';
import { EventBus } from '../events/bus.js';
import { SettingsStore } from '../settings/store.js';
import { DiscoveryService } from '../discovery/service.js';
import { startDiscoverySchedule } from '../discovery/schedule.js';
import { startRollupSchedule } from '../rollup/schedule.js';

export async function run(_args: string[], configPath: string | undefined): Promise<number> {
  const config = loadConfig(configPath);
  const logRing = new LogRing();
  const log = createLogger(config.log.level, logRing);
  process.on('uncaughtException', (err) => {
    // State is unknown after this: log it and exit so systemd starts a clean process.
    log.fatal({ err: err.stack }, 'uncaught exception');
    process.exit(1);
  });

  const db = openDatabase(databasePath(config));
  const sessions = new SessionStore();
  const sweep = setInterval(() => sessions.sweep(), 600_000);
  sweep.unref();
  const devices = new DeviceStore(db);
  const metrics = new MetricsStore(db);
  const events = new EventBus();
  const settings = new SettingsStore(db, config.discovery, (msg) => log.warn({ err: msg }, 'stored settings ignored'));
  const now = Date.now;
  const discovery = new DiscoveryService({ devices, settings, events, log, now });
  const ctx: AgentContext = { config, log, logRing, db, devices, metrics, sessions, events, settings, discovery, now };

  const paths = tlsPaths(config);
  await ensureCertificate(paths, log);
  const app = createApp(ctx);
  const listeners = await startListeners(
    config,
    loadPair(paths),
    app.attach as unknown as (req: IncomingMessage, res: ServerResponse) => void,
    log,
  );
  const stopWatch = watchPair(paths, (pair) => listeners.setCertificate(pair), log);
  const stopWatchdog = startWatchdog(log);
  const stopRollups = startRollupSchedule(db, log);
  const stopDiscovery = startDiscoverySchedule(discovery, settings, log, now);
  log.info({ version: versionInfo().version, data_dir: config.data_dir }, 'agent ready');
  notifyReady(log);

  process.on('SIGUSR2', () => log.info('USB change notified'));
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    notifyStopping(log);
    stopWatch();
    stopWatchdog();
    stopDiscovery();
    await stopRollups();
    await discovery.stop();
    await listeners.close();
    db.close();
    process.exit(0);
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
  return -1; // keeps running
}
