// What the link says about itself: GET /settings shows it as `server.link`, and every change is a
// `server_status` event.
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
