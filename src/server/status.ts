// What the link says about itself: GET /settings shows it as `server.link`, and every change is a
// `server_status` event.
export type LinkState = 'off' | 'registering' | 'rejected' | 'online' | 'offline';

export interface LinkStatus {
  state: LinkState;
  agent_id: string;
  registered: boolean;
  channel_connected: boolean;
  /** Raw snapshots the server has not acknowledged yet. */
  backlog: number;
  last_heartbeat_at?: string;
  last_upload_at?: string;
  settings_version: number;
  last_error?: string;
}
