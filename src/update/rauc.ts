// The box's side of RAUC: its service (rauc.service, root) does every write to a slot; the agent
// asks it over D-Bus, through RAUC's own command line tool and busctl. The image's D-Bus policy
// (de.pengutronix.rauc.conf) lets the agent's user inspect bundles, install and read slot status,
// and nothing else (no marking slots).
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface SlotInfo {
  /** RAUC's slot name (rootfs.0) and the boot loader's name for it (A). */
  name: string;
  bootname: string;
  state: string;
  /** The bundle version RAUC installed there, when it did. */
  version?: string;
  installed_at?: string;
}

export interface SystemStatus {
  compatible: string;
  /** bootname of the running slot */
  booted: string;
  /** slot name the boot loader tries first */
  primary?: string;
  slots: SlotInfo[];
}

export interface BundleInfo {
  compatible: string;
  version: string;
}

/** What the update service needs from the system; tests of the agent's side use a stand-in. */
export interface UpdateSystem {
  /** Why updates cannot happen here (no RAUC), or undefined when they can. */
  unsupported(): string | undefined;
  status(): Promise<SystemStatus>;
  /** Signature, compatible and version of a bundle, checked by RAUC before anything is written. */
  inspect(bundle: string): Promise<BundleInfo>;
  install(bundle: string, onProgress: (percent: number, message: string) => void): Promise<void>;
}

export class RaucError extends Error {}

const RAUC_CONF = '/etc/rauc/system.conf';
const DEST = ['de.pengutronix.rauc', '/', 'de.pengutronix.rauc.Installer'];

/** The last line of a tool's error output, without busctl's prefix: what RAUC said. */
function reason(err: unknown): string {
  const e = err as { stderr?: string; message?: string };
  const lines = String(e.stderr || e.message || err).trim().split('\n').filter(Boolean);
  return (lines.at(-1) ?? 'failed').replace(/^Call failed: /, '');
}

export class Rauc implements UpdateSystem {
  unsupported(): string | undefined {
    return existsSync(RAUC_CONF) ? undefined : `updates need RAUC (${RAUC_CONF} is missing: this is not a PrintBox image with A/B slots)`;
  }

  async status(): Promise<SystemStatus> {
    let out: string;
    try {
      ({ stdout: out } = await run('rauc', ['status', '--detailed', '--output-format=json'], { timeout: 30_000 }));
    } catch (err) {
      throw new RaucError(`rauc status: ${reason(err)}`);
    }
    const j = JSON.parse(out) as { compatible?: string; booted?: string; boot_primary?: string; slots?: Record<string, Record<string, unknown>>[] };
    const slots: SlotInfo[] = [];
    for (const entry of j.slots ?? []) {
      for (const [name, s] of Object.entries(entry)) {
        if (s.class !== 'rootfs') continue;
        const st = (s.slot_status ?? {}) as { bundle?: { version?: string }; installed?: { timestamp?: string } };
        slots.push({
          name,
          bootname: String(s.bootname ?? ''),
          state: String(s.state ?? ''),
          ...(st.bundle?.version ? { version: st.bundle.version } : {}),
          ...(st.installed?.timestamp ? { installed_at: st.installed.timestamp } : {}),
        });
      }
    }
    return { compatible: j.compatible ?? '', booted: j.booted ?? '', ...(j.boot_primary ? { primary: j.boot_primary } : {}), slots };
  }

  async inspect(bundle: string): Promise<BundleInfo> {
    // Info runs in RAUC's service (root): it mounts the bundle and checks its signature against the
    // keyring; `rauc info` would try that as the agent's user.
    try {
      const { stdout } = await run('busctl', ['--system', '--json=short', 'call', ...DEST, 'Info', 's', bundle], { timeout: 120_000 });
      const [compatible, version] = (JSON.parse(stdout) as { data: [string, string] }).data;
      return { compatible, version };
    } catch (err) {
      // RAUC's D-Bus answer is terse ("rauc info error"); its journal has the details.
      throw new RaucError(`RAUC refused the bundle: not signed by a key this box trusts, changed, or not a bundle (RAUC said: ${reason(err)})`);
    }
  }

  install(bundle: string, onProgress: (percent: number, message: string) => void): Promise<void> {
    return new Promise((resolve, reject) => {
      const child = spawn('rauc', ['install', bundle], { stdio: ['ignore', 'pipe', 'pipe'] });
      let tail = '';
      const line = (text: string) => {
        const m = /^\s*(\d+)% (.+)$/.exec(text);
        if (m) onProgress(Number(m[1]), m[2]);
        else if (text.trim()) tail = text.trim();
      };
      let buf = '';
      const feed = (chunk: Buffer) => {
        buf += chunk.toString('utf8');
        let i;
        while ((i = buf.indexOf('\n')) >= 0) {
          line(buf.slice(0, i));
          buf = buf.slice(i + 1);
        }
      };
      child.stdout.on('data', feed);
      child.stderr.on('data', feed);
      child.on('error', (err) => reject(new RaucError(`rauc install: ${err.message}`)));
      child.on('close', (code) => {
        if (buf) line(buf);
        if (code === 0) resolve();
        else reject(new RaucError(`rauc install failed: ${tail.replace(/^installing `[^`]*`: /, '') || `exit ${code}`}`));
      });
    });
  }
}
