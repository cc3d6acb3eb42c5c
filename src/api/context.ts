// What route modules are given: the stores and services of one running agent.
import type { Config } from '../config/config.js';
import type { Logger, LogRing } from '../log/logger.js';
import type { DB } from '../store/db.js';
import type { DeviceStore } from '../store/devices.js';
import type { MetricsStore } from '../store/metrics.js';
import type { SessionStore } from '../auth/sessions.js';
import type { RequestFacts } from '../auth/request-facts.js';
import type { LoginLimiter } from '../auth/login-limiter.js';
import type { HashQueue } from '../auth/hash-queue.js';
import type { DeviceCookies } from '../auth/device-cookie.js';
import type { AccountStore } from '../store/accounts.js';
import type { EventBus } from '../events/bus.js';
import type { SettingsStore } from '../settings/store.js';
import type { DiscoveryService } from '../discovery/service.js';
import type { LinkStatus } from '../events/payloads.js';
import type { PrinterCredentials } from '../printer-web/auto-login.js';
import type { StorageGuard } from '../store/storage-guard.js';
import type { UpdateService } from '../update/service.js';
import type { AlertStore } from '../store/alerts.js';
import type { AlertService } from '../alerts/service.js';
import type { OutboxStore } from '../notify/outbox.js';
import type { NotificationDispatcher } from '../notify/dispatcher.js';

export interface AgentContext {
  config: Config;
  log: Logger;
  logRing: LogRing;
  db: DB;
  devices: DeviceStore;
  metrics: MetricsStore;
  sessions: SessionStore;
  /** Who a request comes from, with forwarding headers counted only from trusted proxies. */
  facts: RequestFacts;
  accounts: AccountStore;
  loginLimiter: LoginLimiter;
  /** Every password hash a request needs goes through it (bounded, fair per address). */
  hashQueue: HashQueue;
  deviceCookies: DeviceCookies;
  events: EventBus;
  settings: SettingsStore;
  discovery: DiscoveryService;
  /** The central server link (set once it exists; absent in tools that serve no link). */
  serverLink?: {
    status(): LinkStatus;
    /** The server's stored web credentials for a printer (undefined: none, or not registered). */
    deviceCredentials?(serial: string, signal?: AbortSignal): Promise<PrinterCredentials | undefined>;
  };
  /** The data file system's guard (absent in tools that write nothing). */
  storage?: StorageGuard;
  /** A/B updates (absent in tools that install nothing). */
  updates?: UpdateService;
  alerts: AlertStore;
  alertService: AlertService;
  outbox: OutboxStore;
  notifications: NotificationDispatcher;
  /** Clock for the API (tests of tier windows run against real time). */
  now(): number;
}
