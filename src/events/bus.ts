// In-process events for the SSE stream (decisions.md, Events).
import { EventEmitter } from 'node:events';
import type { LinkStatus } from '../server/status.js';
import type { StorageStatus } from '../store/storage-guard.js';
import type { UpdateProgress } from '../update/service.js';
import type { AlertJson } from '../alerts/service.js';

export interface DiscoveryUpdate {
  scan_id: number;
  state: 'running' | 'done' | 'failed';
  scanned: number;
  total: number;
  found: number;
  /** Hosts that answered (SNMP, open ports, IPP) and are not printers: not listed (GET /discover/status says why). */
  not_printers?: number;
  error?: string;
}

export type DeviceChangeKind = 'discovered' | 'updated' | 'saved' | 'hidden' | 'deleted' | 'metrics';

export interface AgentEvents {
  discovery_update: DiscoveryUpdate;
  /** `moved`: the record followed its printer from one address to another (discovery/sightings.ts). */
  device_change: { serial: string; change: DeviceChangeKind; moved?: { from: string; to: string } };
  server_status: LinkStatus;
  storage_status: StorageStatus;
  update_progress: UpdateProgress;
  job_progress: JobProgress;
  /** An alert opened, cleared or acknowledged (alerts/service.ts). */
  alert: AlertJson & { change: 'opened' | 'cleared' | 'acknowledged' };
}

/**
 * A background job's progress (`POST /devices/metrics/collect?async=true`), in the reference
 * agent's `job_progress` shape: the central server shows it to whoever pressed the button.
 */
export interface JobProgress {
  job_id: string;
  job_type: 'metrics_collect';
  status: 'running' | 'completed' | 'failed';
  progress: number;
  message: string;
  error?: string;
  result?: Record<string, unknown>;
}

export type EventName = keyof AgentEvents;

export class EventBus {
  private readonly emitter = new EventEmitter();
  constructor() {
    this.emitter.setMaxListeners(0); // SSE clients are capped by the route, not here
  }
  emit<K extends EventName>(name: K, data: AgentEvents[K]): void {
    this.emitter.emit('event', name, data);
  }
  /** Every event, in order; returns an unsubscribe function. */
  subscribe(listener: (name: EventName, data: unknown) => void): () => void {
    this.emitter.on('event', listener);
    return () => this.emitter.off('event', listener);
  }
}
