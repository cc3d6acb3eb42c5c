// printbox-agent redirect: the HTTP -> HTTPS redirect on its own, for systemd socket activation
// (printbox-redirect.socket holds port 8080, so it answers even while the agent restarts).
import { createServer } from 'node:http';
import { loadConfig } from '../config/config.js';
import { redirectHandler } from '../web/redirect.js';
import { harden, HTTP_LIMITS, listen } from '../web/listeners.js';
import { ConnectionGate } from '../web/connection-gate.js';

const SD_LISTEN_FDS_START = 3;

function option(args: string[], name: string): string | undefined {
  const i = args.indexOf(name);
  return i === -1 ? undefined : args[i + 1];
}

export async function run(args: string[], configPath: string | undefined): Promise<number> {
  const cfg = loadConfig(configPath);
  const httpsPort = Number(option(args, '--https-port') ?? cfg.web.https_port);
  const port = Number(option(args, '--port') ?? (cfg.web.http_port || 8080));
  if (!Number.isInteger(httpsPort) || httpsPort < 1 || httpsPort > 65535) {
    process.stderr.write('printbox-agent redirect: --https-port must be a port number\n');
    return 2;
  }
  const server = createServer(redirectHandler(httpsPort));
  // The agent's own limits and caps (web/listeners.ts, web/connection-gate.ts): a redirect has no
  // body to wait for, so the whole request gets the headers' time. Its log is JSON lines on
  // standard output, as the line below (journald keeps them).
  const log = {
    debug: () => {},
    warn: (obj: object, msg: string) => process.stdout.write(JSON.stringify({ level: 40, time: Date.now(), ...obj, msg }) + '\n'),
  };
  harden(server, log, { ...HTTP_LIMITS, headersTimeout: 10_000, requestTimeout: 15_000 });
  const connections = new ConnectionGate(log);
  connections.guard(server);
  const activated = process.env.LISTEN_PID === String(process.pid) && Number(process.env.LISTEN_FDS) >= 1;
  if (activated) {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ fd: SD_LISTEN_FDS_START }, resolve);
    });
  } else {
    // Named like the agent's own listeners: the address, the port and the key that set it.
    await listen(server, port, cfg.web.listen_address, option(args, '--port') ? '--port' : 'web.http_port');
  }
  process.stdout.write(JSON.stringify({ msg: 'redirecting', to_port: httpsPort, socket_activated: activated }) + '\n');
  const stop = () => server.close(() => process.exit(0));
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  return -1; // keeps running
}
