// USB printer gadgets for the boot test, run inside the test VM as root with the image's Node
// (copied into the test's disk only). Debian's kernel has dummy_hcd (a virtual host and device
// controller pair per bus), libcomposite and usb_f_printer: a configfs gadget with a printer
// function is a real USB printer on a virtual bus, enumerated by the VM's kernel, seen by the
// agent through the real `usb` package. The gadget side of each printer's bulk endpoints is
// /dev/g_printerN, answered here for printers that speak PJL.
//   usb-printers.mjs setup                       load the modules: three buses (dummy_udc.0-2)
//   usb-printers.mjs add NAME JSON               a gadget: {"pnp":..., "serial":..., "pagecount":N|null, ...}
//   usb-printers.mjs plug NAME UDC               bind it to a bus, and answer PJL (a detached child) until unbound
//   usb-printers.mjs unplug NAME                 unbind it
//   usb-printers.mjs time-plug NAME UDC SERIAL   bind, start answering PJL (a detached child), poll the
//                                                API on loopback until SERIAL is listed; prints the
//                                                milliseconds from the bind (one clock: the VM's)
//   usb-printers.mjs answer NAME                 answer PJL for a bound gadget until it is unbound
//   usb-printers.mjs add-hostile NAME SERIAL     a printer-class interface on FunctionFS, whose
//                                                class requests (GET_DEVICE_ID ...) are never answered
//   usb-printers.mjs plug-hostile NAME UDC       bind it (a detached child holds its ep0)
import { mkdirSync, writeFileSync, readFileSync, symlinkSync, existsSync, openSync, readSync, writeSync, closeSync } from 'node:fs';
import { execFileSync, spawn } from 'node:child_process';
import https from 'node:https';

const G = '/sys/kernel/config/usb_gadget';
const STATE = '/run/usb-printers';
const [cmd, ...args] = process.argv.slice(2);

function setup() {
  execFileSync('modprobe', ['dummy_hcd', 'num=3']);
  execFileSync('modprobe', ['libcomposite']);
  execFileSync('modprobe', ['usb_f_printer']);
  if (!existsSync(G)) execFileSync('mount', ['-t', 'configfs', 'none', '/sys/kernel/config']);
  mkdirSync(STATE, { recursive: true });
}

/** Gadgets are numbered in the order they are added: f_printer gives instance N /dev/g_printerN. */
function add(name, spec) {
  const s = JSON.parse(spec);
  const dir = `${G}/${name}`;
  mkdirSync(`${dir}/strings/0x409`, { recursive: true });
  writeFileSync(`${dir}/idVendor`, s.vid ?? '0x1d6b');
  writeFileSync(`${dir}/idProduct`, s.pid ?? '0x0104');
  writeFileSync(`${dir}/bcdUSB`, '0x0200');
  writeFileSync(`${dir}/strings/0x409/manufacturer`, s.manufacturer ?? 'PrintBox test');
  writeFileSync(`${dir}/strings/0x409/product`, s.product ?? 'Gadget printer');
  if (s.serial) writeFileSync(`${dir}/strings/0x409/serialnumber`, s.serial);
  const fn = `${dir}/functions/printer.${name}`;
  mkdirSync(fn);
  // f_printer (kernel 6.1) leaves out the last two characters of pnp_string: two spare ones.
  writeFileSync(`${fn}/pnp_string`, `${s.pnp}  `);
  writeFileSync(`${fn}/q_len`, '10');
  mkdirSync(`${dir}/configs/c.1/strings/0x409`, { recursive: true });
  writeFileSync(`${dir}/configs/c.1/strings/0x409/configuration`, 'printer');
  symlinkSync(fn, `${dir}/configs/c.1/printer.${name}`);
  const n = existsSync(`${STATE}/count`) ? Number(readFileSync(`${STATE}/count`, 'utf8')) : 0;
  writeFileSync(`${STATE}/count`, String(n + 1));
  writeFileSync(`${STATE}/${name}.json`, JSON.stringify({ ...s, minor: n }));
}

const spec = (name) => JSON.parse(readFileSync(`${STATE}/${name}.json`, 'utf8'));
// An empty write never reaches the kernel: unbinding is a line with nothing on it.
const bind = (name, udc) => writeFileSync(`${G}/${name}/UDC`, udc ? udc : '\n');

/**
 * The printer side of the bulk endpoints while bound: answers @PJL INFO PAGECOUNT and INFO STATUS
 * (when the gadget has a page count; a silent one reads and never answers). Ends when unbound.
 */
function answerPjl(name) {
  const s = spec(name);
  const udc = readFileSync(`${G}/${name}/UDC`, 'utf8').trim();
  if (!udc) return;
  // Opened once, after the host has configured the gadget (f_printer refuses reads before). Not
  // opened again in a loop: an open racing the gadget's teardown locked the VM's kernel up once
  // (chrdev_open spinning), so the answerer ends with its printer.
  for (let i = 0; i < 100; i++) {
    const state = readFileSync(`/sys/class/udc/${udc}/state`, 'utf8').trim();
    if (state === 'configured') break;
    execFileSync('sleep', ['0.05']);
  }
  let fd;
  try {
    fd = openSync(`/dev/g_printer${s.minor}`, 'r+');
  } catch (err) {
    console.error(`${name}: ${err.message}`);
    return;
  }
  const buf = Buffer.alloc(4096);
  let text = '';
  try {
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n <= 0) break;
      text += buf.subarray(0, n).toString('latin1');
      if (s.pagecount == null) { text = ''; continue; }
      let m;
      while ((m = /@PJL INFO (PAGECOUNT|STATUS)\r?\n/.exec(text))) {
        text = text.slice(m.index + m[0].length);
        const reply = m[1] === 'PAGECOUNT'
          ? `@PJL INFO PAGECOUNT\r\n${s.pagecount}\r\n\f`
          : `@PJL INFO STATUS\r\nCODE=10001\r\nDISPLAY="Ready"\r\nONLINE=TRUE\r\n\f`;
        writeSync(fd, Buffer.from(reply, 'latin1'));
      }
      if (text.length > 8192) text = text.slice(-1024);
    }
  } catch (err) {
    console.error(`${name}: ${err.message}`); // unbound: the printer is gone
  } finally {
    closeSync(fd);
  }
}

/** SERIAL is listed, seen since `since` (ms, the API's whole seconds) and not marked unplugged. */
function listed(serial, since) {
  return new Promise((resolve) => {
    const req = https.get({ host: '127.0.0.1', port: 8443, path: '/devices/discovered?include_known=true', rejectUnauthorized: false, headers: { accept: 'application/json' } }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => {
        if (res.statusCode !== 200) return resolve(false);
        const p = JSON.parse(body).find((x) => x.serial === serial);
        resolve(Boolean(p && Date.parse(p.last_seen) >= Math.floor(since / 1000) * 1000 && !(p.status_messages ?? []).includes('offline: unplugged')));
      });
    });
    req.on('error', () => resolve(false));
    req.setTimeout(2000, () => req.destroy());
  });
}

/** A gadget whose printer interface is served from user space (FunctionFS): it ignores requests. */
function addHostile(name, serial) {
  execFileSync('modprobe', ['usb_f_fs']);
  const dir = `${G}/${name}`;
  mkdirSync(`${dir}/strings/0x409`, { recursive: true });
  writeFileSync(`${dir}/idVendor`, '0x1d6b');
  writeFileSync(`${dir}/idProduct`, '0x0105');
  writeFileSync(`${dir}/strings/0x409/manufacturer`, 'PrintBox test');
  writeFileSync(`${dir}/strings/0x409/product`, 'Hostile printer');
  writeFileSync(`${dir}/strings/0x409/serialnumber`, serial);
  mkdirSync(`${dir}/functions/ffs.${name}`);
  mkdirSync(`${dir}/configs/c.1`, { recursive: true });
  symlinkSync(`${dir}/functions/ffs.${name}`, `${dir}/configs/c.1/ffs.${name}`);
  mkdirSync(`${STATE}/ffs-${name}`, { recursive: true });
  execFileSync('mount', ['-t', 'functionfs', name, `${STATE}/ffs-${name}`]);
}

/** FunctionFS descriptors (v2): one printer interface (class 7/1/2), bulk IN and OUT, full and high speed. */
function ffsDescriptors() {
  const intf = [9, 4, 0, 0, 2, 7, 1, 2, 1];
  const ep = (addr, size) => [7, 5, addr, 2, size & 255, size >> 8, 0];
  const fs = [...intf, ...ep(0x81, 64), ...ep(0x02, 64)];
  const hs = [...intf, ...ep(0x81, 512), ...ep(0x02, 512)];
  const body = [...fs, ...hs];
  const head = Buffer.alloc(20);
  head.writeUInt32LE(3, 0); // FUNCTIONFS_DESCRIPTORS_MAGIC_V2
  head.writeUInt32LE(20 + body.length, 4);
  head.writeUInt32LE(1 | 2, 8); // HAS_FS_DESC | HAS_HS_DESC
  head.writeUInt32LE(3, 12);
  head.writeUInt32LE(3, 16);
  const text = Buffer.from('Printer\0');
  const strings = Buffer.alloc(16 + 2 + text.length);
  strings.writeUInt32LE(2, 0); // FUNCTIONFS_STRINGS_MAGIC
  strings.writeUInt32LE(strings.length, 4);
  strings.writeUInt32LE(1, 8);
  strings.writeUInt32LE(1, 12);
  strings.writeUInt16LE(0x0409, 16);
  text.copy(strings, 18);
  return [Buffer.concat([head, Buffer.from(body)]), strings];
}

/** Holds ep0 and reads its events without ever answering a SETUP: the host's requests time out. */
function serveHostile(name, udc) {
  const ep0 = openSync(`${STATE}/ffs-${name}/ep0`, 'r+');
  for (const b of ffsDescriptors()) writeSync(ep0, b);
  bind(name, udc);
  const ev = Buffer.alloc(12 * 4);
  try {
    while (readSync(ep0, ev, 0, ev.length, null) > 0) {
      // SETUP (type 4) included: ignored, so the control transfer is never completed.
    }
  } catch {
    // unmounted or unbound
  }
}

/** Runs `command` for gadget NAME in a detached child whose pid unplug() ends first. */
function inBackground(name, ...command) {
  const child = spawn(process.execPath, [process.argv[1], ...command], { detached: true, stdio: 'ignore' });
  writeFileSync(`${STATE}/${name}.pid`, String(child.pid));
  child.unref();
}

function answerInBackground(name) {
  inBackground(name, 'answer', name);
}

/**
 * Unplugs NAME. Its gadget-side process is ended first, while the device node still exists:
 * f_printer (6.1) frees its character device on unbind even with the node open, and the process's
 * later close then corrupts the kernel's lists (a BUG in cdev_put, seen here at a reboot).
 */
function unplug(name) {
  const pidFile = `${STATE}/${name}.pid`;
  if (existsSync(pidFile)) {
    const pid = Number(readFileSync(pidFile, 'utf8'));
    try {
      process.kill(pid, 'SIGKILL');
      for (let i = 0; i < 40 && existsSync(`/proc/${pid}`); i++) execFileSync('sleep', ['0.05']);
    } catch {
      // already gone
    }
  }
  try {
    bind(name, '');
  } catch {
    // a FunctionFS gadget unbinds itself when its ep0 closes
  }
}

async function timePlug(name, udc, serial) {
  const t0 = process.hrtime.bigint();
  const since = Date.now();
  bind(name, udc);
  answerInBackground(name);
  for (;;) {
    if (await listed(serial, since)) break;
    if (Number(process.hrtime.bigint() - t0) / 1e6 > 30000) { console.log('timeout'); process.exit(1); }
    await new Promise((r) => setTimeout(r, 20));
  }
  console.log((Number(process.hrtime.bigint() - t0) / 1e6).toFixed(0));
}

switch (cmd) {
  case 'setup': setup(); break;
  case 'add': add(args[0], args[1]); break;
  case 'plug': bind(args[0], args[1]); answerInBackground(args[0]); break;
  case 'unplug': unplug(args[0]); break;
  case 'answer': answerPjl(args[0]); break;
  case 'add-hostile': addHostile(args[0], args[1]); break;
  case 'plug-hostile': inBackground(args[0], 'serve-hostile', args[0], args[1]); break;
  case 'serve-hostile': serveHostile(args[0], args[1]); break;
  case 'time-plug': await timePlug(args[0], args[1], args[2]); break;
  default: console.error(`unknown command ${cmd}`); process.exit(2);
}
