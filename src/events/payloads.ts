// The payloads of the bus's events (bus.ts), beside the bus so that it depends on none of the
// modules that emit them: each producer imports its payload's type from here.

// What the server link says about itself: GET /settings shows it as `server.link`, and every
// change is a `server_status` event.
export type LinkState = 'off' | 'registering' | 'rejected' | 'online' | 'failing' | 'offline';

export interface LinkStatus {
  state: LinkState;
  agent_id: string;
  registered: boolean;
  channel_connected: boolean;
  /** Raw snapshots the server has not acknowledged yet. */
  backlog: number;
  last_heartbeat_at?: string;
  last_upload_at?: string;
  /** The managed settings version last applied: the server's SHA-256 hex, "" for none. */
  settings_version: string;
  /** Managed fields that mean nothing on this box (left as they were). */
  settings_unmapped?: string[];
  /** The last upload's failure, until an upload goes through. */
  upload_error?: string;
  last_error?: string;
}

// The storage guard's state (store/storage-guard.ts): GET /settings and `storage_status` events.
export type StorageState = 'ok' | 'low' | 'full' | 'read_only' | 'io_error';

export interface StorageStatus {
  state: StorageState;
  /** Free bytes on the data file system, as last measured. */
  free_bytes: number | null;
  reserve_bytes: number;
  /** The storage error that set the state (full, read_only, io_error), with what was being written. */
  error: string | null;
  since: string;
  /** Readings taken while the card could not be written, kept in memory until it can. */
  pending_readings: number;
}

// An update's progress (update/service.ts): GET /autoupdate/status and `update_progress` events.
export type UpdateState = 'idle' | 'checking' | 'downloading' | 'verifying' | 'installing' | 'rebooting';

export interface UpdateProgress {
  state: UpdateState;
  version?: string;
  percent?: number;
  message?: string;
  bytes?: number;
  total?: number;
  error?: string;
}

/** An alert as the API, the event stream and the central server see it. */
export interface AlertJson {
  id: number;
  serial: string;
  kind: string;
  /** The supply key for supply alerts, else null. */
  supply: string | null;
  severity: string;
  message: string;
  opened_at: string;
  cleared_at: string | null;
  acknowledged_at: string | null;
}

// A scan's progress (discovery/scan-run.ts): `discovery_update` events.
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
