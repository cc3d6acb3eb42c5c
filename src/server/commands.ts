// The central server's `command` frames (server-protocol.md), each handled or answered in a form
// the reference server shows: it answers its UI at once ("sent") and knows no `command_result` (an
// unknown frame type is an error on its side), but it shows `update_progress` (the agent's progress
// button, an "Update failed - <error>" toast), a failed `job_progress` (an error on its Logs page)
// and the agent's status from heartbeats. Update commands answer the first, the box's own commands
// and unknown ones the second, `restart` the third (link.ts). The table, with what each does and
// answers, is docs/architecture.md's ("Commands").
import { randomUUID } from 'node:crypto';
import type { Logger } from '../log/logger.js';
import { toServerProgress, updateFailed } from './update-progress.js';
import type { UpdateProgress } from '../events/payloads.js';
import { errorText } from '../shared/error-text.js';

/** What the server's update commands call (update/service.ts). */
export interface UpdateCommands {
  check(): Promise<Record<string, unknown>>;
  force(reason: string): Promise<Record<string, unknown>>;
  cancel(): Record<string, unknown>;
}

/** What the server's `discover` and `collect` commands call (discovery/service.ts). */
export interface ScanCommands {
  /** Starts a scan, or reports the one running. */
  start(): { alreadyRunning: boolean; state: { scan_id: number } };
  /** Reads one saved printer now: its snapshot, or undefined when none was read. */
  collect(serial: string): Promise<object | undefined>;
  /** Reads every saved printer now: the snapshots read. */
  collectSaved(): Promise<object[]>;
}

/**
 * The commands the server link runs for the server, handed to it at construction by the
 * composition root (commands/serve.ts): the link knows these operations, not the services behind them.
 */
export interface LinkCommands {
  discovery: ScanCommands;
  /** The update service (undefined: none in this process). Asked at each command: it is made after the link. */
  updates(): UpdateCommands | undefined;
  /**
   * The agent's own shutdown (as SIGTERM), after which systemd starts it again. Absent where nothing
   * would (the `restart` command is then answered as refused).
   */
  restart?: (reason: string) => void;
}

export interface CommandDeps {
  discovery: ScanCommands;
  updates: LinkCommands['updates'];
  /** Tells the server the box is going away, then ends the process as SIGTERM does; undefined where nothing can restart it. */
  restart: ((reason: string) => void) | undefined;
  /** Sends a frame to the server (false when the channel is down). */
  send(type: string, data: Record<string, unknown>): boolean;
  log: Logger;
}

type Handler = (data: Record<string, unknown>, job: Job) => Promise<void> | void;

/** One command's `job_progress` frames. */
interface Job {
  done(message: string, result?: Record<string, unknown>): void;
}

/** A command refused: its message is the answer's `error`. */
class CommandError extends Error {}

/** A command's name as an answer quotes it: bounded, whatever the server sent. */
const printable = (v: unknown): string => JSON.stringify(typeof v === 'string' ? v.slice(0, 64) : (v ?? null)).slice(0, 80);

export class ServerCommands {
  private readonly table: Record<string, Handler> = {
    check_update: () => this.update('check_update', async (u) => {
      const status = await u.check();
      // Newer than the running version: the reference agent installs it at a check; so does the box.
      if (typeof status.available_version === 'string') await u.force('central server: check_update');
    }),
    force_update: (data) => this.update('force_update', (u) => u.force(typeof data.reason === 'string' ? data.reason.slice(0, 200) : 'central server: force_update')),
    cancel_update: () => this.update('cancel_update', (u) => void u.cancel()),
    restart: () => {
      if (!this.d.restart) throw new CommandError('restart is not available in this process (nothing would start it again)');
      this.d.restart('the central server asked for a restart');
    },
    discover: (_data, job) => {
      const r = this.d.discovery.start();
      job.done(r.alreadyRunning ? `scan ${r.state.scan_id} was already running` : `scan ${r.state.scan_id} started`, { scan_id: r.state.scan_id });
    },
    collect: async (data, job) => {
      const serial = typeof data.serial === 'string' ? data.serial : undefined;
      const read = serial ? [await this.d.discovery.collect(serial)].filter(Boolean) : await this.d.discovery.collectSaved();
      if (serial && !read.length) throw new CommandError(`no snapshot read from ${serial}`);
      job.done(`${read.length} device(s) read`, { collected: read.length });
    },
  };

  constructor(private readonly d: CommandDeps) {}

  /** The commands the box handles. */
  get names(): string[] {
    return Object.keys(this.table);
  }

  /** The server's update progress, in its form, for every update (the server's or the box's own). */
  progress(p: UpdateProgress): void {
    this.d.send('update_progress', toServerProgress(p));
  }

  async run(data: Record<string, unknown>): Promise<void> {
    const name = typeof data.command === 'string' ? data.command : '';
    const handler = Object.hasOwn(this.table, name) ? this.table[name] : undefined;
    const jobId = randomUUID();
    const jobType = name ? name.slice(0, 64) : 'command';
    const job: Job = {
      done: (message, result) => {
        this.d.log.info({ command: jobType, ...result }, 'server command done');
        this.d.send('job_progress', { job_id: jobId, job_type: jobType, status: 'completed', progress: 100, message, ...(result ? { result } : {}) });
      },
    };
    try {
      if (!handler) throw new CommandError(`unknown command ${printable(data.command)}: this box handles ${this.names.join(', ')}`);
      await handler(data, job);
    } catch (err) {
      const reason = errorText(err);
      this.d.log.warn({ command: jobType, err: reason }, 'server command failed');
      this.d.send('job_progress', { job_id: jobId, job_type: jobType, status: 'failed', progress: 0, message: `${jobType} failed`, error: reason });
    }
  }

  /** An update command: its refusal (no RAUC, busy, no source) goes as a failed `update_progress`; its progress follows the update. */
  private async update(name: string, call: (u: UpdateCommands) => Promise<unknown> | void): Promise<void> {
    const u = this.d.updates();
    try {
      if (!u) throw new Error('updates are not available on this box');
      await call(u);
      this.d.log.info({ command: name }, 'server command done');
    } catch (err) {
      const reason = errorText(err);
      this.d.log.warn({ command: name, err: reason }, 'server command failed');
      this.d.send('update_progress', updateFailed(name === 'cancel_update' ? `Cannot cancel: ${reason}` : reason));
    }
  }
}
