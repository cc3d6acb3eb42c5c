// What route modules are given: the stores and services of one running agent.
import type { Config } from '../config/config.js';
import type { Logger, LogRing } from '../log/logger.js';
import type { DB } from '../store/db.js';
import type { DeviceStore } from '../store/devices.js';
import type { MetricsStore } from '../store/metrics.js';
import type { SessionStore } from '../auth/sessions.js';

export interface AgentContext {
  config: Config;
  log: Logger;
  logRing: LogRing;
  db: DB;
  devices: DeviceStore;
  metrics: MetricsStore;
  sessions: SessionStore;
  /** Clock for the API (tests of tier windows run against real time). */
  now(): number;
}
