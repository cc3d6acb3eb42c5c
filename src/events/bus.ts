// In-process events for the SSE stream (docs/decisions/0013-event-stream.md).
import { EventEmitter } from 'node:events';
import type { AlertJson, DeviceChangeKind, DiscoveryUpdate, JobProgress, LinkStatus, StorageStatus, UpdateProgress } from './payloads.js';

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
