// sd_notify for Type=notify units: READY=1 once the listeners accept, WATCHDOG=1 from the event
// loop so a hung loop gets the agent restarted. Node has no AF_UNIX datagram sockets, so the
// messages go through systemd-notify, which waits until the manager has read them (the unit sets
// NotifyAccess=all because the sender is that child process).
import { execFile } from 'node:child_process';
import type { Logger } from '../log/logger.js';

const enabled = () => Boolean(process.env.NOTIFY_SOCKET);

function send(args: string[], log: Logger): void {
  execFile('systemd-notify', args, { timeout: 5000 }, (err) => {
    if (err) log.warn({ err: err.message, args }, 'systemd-notify failed');
  });
}

export function notifyReady(log: Logger): void {
  if (enabled()) send(['--ready', `--pid=${process.pid}`, `STATUS=serving`], log);
}

export function notifyStopping(log: Logger): void {
  if (enabled()) send(['STOPPING=1'], log);
}

/** Starts watchdog pings at half the unit's WatchdogSec; returns a stop function. */
export function startWatchdog(log: Logger): () => void {
  const usec = Number(process.env.WATCHDOG_USEC);
  const pid = process.env.WATCHDOG_PID;
  if (!enabled() || !usec || (pid && Number(pid) !== process.pid)) return () => {};
  const timer = setInterval(() => send(['WATCHDOG=1'], log), Math.max(1000, usec / 2000));
  timer.unref();
  return () => clearInterval(timer);
}
