// The box's update progress (update/service.ts) as the central server's `update_progress` frame:
// the reference agent's shape `{status, progress, message, target_version?, error?}` with its
// statuses, which the server's UI turns into the agent's progress button and its toasts
// (checking, downloading, staging/applying = "ready", restarting, failed, cancelled, idle).
// `progress` is the reference's overall figure, -1 where there is none: downloading fills 0-50,
// RAUC's check of the bundle 58, its install 60-80, the reboot 80 (the reference agent's own
// split: download to 50, staging 58, applying 68, restarting 80).
import type { UpdateProgress } from '../events/payloads.js';

export type ServerUpdateStatus = 'idle' | 'checking' | 'downloading' | 'staging' | 'applying' | 'restarting' | 'failed' | 'cancelled';

export interface ServerUpdateProgress extends Record<string, unknown> {
  status: ServerUpdateStatus;
  progress: number;
  message: string;
  target_version?: string;
  error?: string;
}

/** A failure in the reference's form: the server's UI shows `error` in its "Update failed" toast. */
export function updateFailed(reason: string, targetVersion?: string): ServerUpdateProgress {
  return { status: 'failed', progress: -1, message: reason, error: reason, ...(targetVersion ? { target_version: targetVersion } : {}) };
}

export function toServerProgress(p: UpdateProgress): ServerUpdateProgress {
  const target = p.version ? { target_version: p.version } : {};
  const percent = typeof p.percent === 'number' ? Math.max(0, Math.min(100, p.percent)) : undefined;
  switch (p.state) {
    case 'checking':
      return { status: 'checking', progress: -1, message: 'Checking for an update...', ...target };
    case 'downloading':
      return { status: 'downloading', progress: Math.round((percent ?? 0) / 2), message: `Downloading... ${percent ?? 0}%`, ...target };
    case 'verifying':
      return { status: 'staging', progress: 58, message: "RAUC checks the bundle's signature...", ...target };
    case 'installing':
      return { status: 'applying', progress: 60 + Math.round((percent ?? 0) / 5), message: p.message || 'Installing into the other slot (cannot cancel)...', ...target };
    case 'rebooting':
      return { status: 'restarting', progress: 80, message: 'Installed: rebooting into the new slot...', ...target };
    case 'idle':
      if (p.error === 'cancelled') return { status: 'cancelled', progress: -1, message: 'Update cancelled', ...target };
      if (p.error) return updateFailed(p.error, p.version);
      return { status: 'idle', progress: -1, message: p.message ?? '', ...target };
  }
}
