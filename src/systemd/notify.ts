// sd_notify for Type=notify units: READY=1 once the listeners accept, WATCHDOG=1 from the event
// loop so a hung loop gets the agent restarted. Node has no AF_UNIX datagram sockets, so the
// messages go through systemd-notify, which waits until the manager has read them (the unit sets
// NotifyAccess=all because the sender is that child process).
import { execFile } from 'node:child_process';
import type { Logger } from '../log/logger.js';

const enabled = () => Boolean(process.env.NOTIFY_SOCKET);

// A message whose sender has exited before PID 1 read it is dropped, so systemd-notify is given
// time to finish: a busy PID 1 on a loaded boot takes seconds (see startWatchdog).
function send(args: string[], log: Logger): void {
  execFile('systemd-notify', args, { timeout: 30_000 }, (err) => {
    if (err) log.warn({ err: err.message, args }, 'systemd-notify failed');
  });
}

export function notifyReady(log: Logger): void {
  if (enabled()) send(['--ready', `--pid=${process.pid}`, `STATUS=serving`], log);
}

export function notifyStopping(log: Logger): void {
  if (enabled()) send(['STOPPING=1'], log);
}

/**
 * Starts watchdog pings at a quarter of the unit's WatchdogSec; returns a stop function.
 *
 * Each ping is a systemd-notify child, which waits until PID 1 has read the message (a message
 * whose sender has already exited is dropped, so the child must not be cut short). In the boot test
 * under two CPU hogs the agent was killed by the watchdog 60 s after READY, with no ping counted
 * and nothing logged; with pings at half the period, two lost ones were enough. So there are four
 * chances a period, a child has until the next-but-one ping, and what delays a ping is logged: the
 * event loop blocked past a whole interval (the tick came late), or a child slower than an interval.
 */
export function startWatchdog(log: Logger): () => void {
  const usec = Number(process.env.WATCHDOG_USEC);
  const pid = process.env.WATCHDOG_PID;
  if (!enabled() || !usec || (pid && Number(pid) !== process.pid)) return () => {};
  const every = Math.max(1000, usec / 4000);
  let due = Date.now() + every;
  const timer = setInterval(() => {
    const now = Date.now();
    if (now - due > every) log.warn({ late_ms: now - due, watchdog_ms: usec / 1000 }, 'watchdog ping late: the event loop was blocked');
    due = now + every;
    execFile('systemd-notify', ['WATCHDOG=1'], { timeout: 2 * every }, (err) => {
      const ms = Date.now() - now;
      if (err) log.warn({ err: err.message, ms }, 'watchdog ping failed');
      else if (ms > every) log.warn({ ms, watchdog_ms: usec / 1000 }, 'watchdog ping slow: systemd-notify took longer than the ping interval');
    });
  }, every);
  timer.unref();
  return () => clearInterval(timer);
}
