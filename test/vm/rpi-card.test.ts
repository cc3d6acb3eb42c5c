// The built Raspberry Pi card, checked for every board it supports (test/vm/rpi-boards.ts) from its
// files: what the QEMU smoke boot (scripts/image/smoke-arm64.sh, -M virt) cannot show about a real
// Pi. For each board: its device trees are on the boot partition; the firmware files its boot loads
// are there (the cut-down ones when config.txt gives the GPU 16 MB); config.txt has its section, and
// what the board reads from config.txt names files that exist (U-Boot, which drives the board's SD
// controller); its SD card's driver and everything the device tree says that controller waits for
// (regulators, their GPIOs, pins, clocks) are in the initramfs or built into the kernel; and the
// modules its Ethernet, USB and Wi-Fi need are in the root's module tree at the card's kernel version.
// Run by smoke-arm64.sh right after the card is built (PRINTBOX_CARD_REQUIRED=1: no card is a
// failure there); anywhere else it is skipped, saying so, until the card has been built.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { repoRoot } from '../kit/agent.js';
import { copyFat, effectiveConfig, enabledNodes, Ext4, initramfsFiles, mbrPartitions, parseDtb, strings, type DtNode } from '../kit/rpi-card.js';
import { boards } from './rpi-boards.js';

const CARD = join(repoRoot, 'build/arm64/printbox-rpi.img');
const required = process.env.PRINTBOX_CARD_REQUIRED === '1';
const tools = ['mcopy', 'debugfs'].filter((t) => spawnSync('sh', ['-c', `command -v ${t}`]).status !== 0);
let why: string | false = false;
if (!existsSync(CARD)) why = `the Raspberry Pi card has not been built (${CARD}): run scripts/build-image.sh arm64`;
else if (tools.length) why = `${tools.join(', ')} missing (mtools, e2fsprogs)`;
if (why && required) throw new Error(`PRINTBOX_CARD_REQUIRED=1 but ${why}`);
if (why) console.log(`# SKIPPED: the built card's files per board: ${why}`);

/** Module name as the kernel knows it: file name without .ko*, dashes as underscores. */
const moduleName = (path: string) => path.replace(/^.*\//, '').replace(/\.ko(\.[a-z]+)?$/, '').replace(/-/g, '_');
// Compatibles the kernel's core handles without a driver module (early clock setup, buses).
const CORE = new Set(['fixed-clock', 'fixed-factor-clock', 'simple-bus', 'simple-mfd', 'arm,pl011', 'arm,primecell']);

describe("the built Raspberry Pi card, board by board (the card's files)", { skip: why }, () => {
  let boot = '';
  let kver = '';
  let config = '';
  let uboot = Buffer.alloc(0);
  const available = new Set<string>(); // modules.dep
  const builtin = new Set<string>(); // modules.builtin
  const inInitramfs = new Set<string>();
  const drivers = new Map<string, Set<string>>(); // compatible -> modules claiming it (modules.alias, modules.builtin.modinfo)
  const claim = (compat: string, mod: string) => { if (!drivers.has(compat)) drivers.set(compat, new Set()); drivers.get(compat)!.add(mod); };
  const loadable = (m: string) => available.has(m) || builtin.has(m);
  const atBoot = (m: string) => inInitramfs.has(m) || builtin.has(m);

  before(() => {
    const parts = mbrPartitions(CARD);
    boot = copyFat(CARD, parts[0].start);
    const root = new Ext4(CARD, parts[1].start);
    const kernels = root.ls('/usr/lib/modules');
    assert.equal(kernels.length, 1, `one kernel in slot A's /usr/lib/modules: ${kernels.join(', ')}`);
    kver = kernels[0];
    const boots = root.ls('/boot');
    assert.ok(boots.includes(`vmlinuz-${kver}`) && boots.includes(`initrd.img-${kver}`), `/boot has ${kver}'s kernel and initramfs: ${boots.join(' ')}`);
    // U-Boot's boot script (image/rpi/boot.cmd) loads /vmlinuz and /initrd.img from the slot.
    assert.equal(root.linkTarget('/vmlinuz')?.replace(/^\//, ''), `boot/vmlinuz-${kver}`);
    assert.equal(root.linkTarget('/initrd.img')?.replace(/^\//, ''), `boot/initrd.img-${kver}`);
    const dir = `/usr/lib/modules/${kver}`;
    for (const line of root.text(`${dir}/modules.dep`).split('\n')) if (line.includes(':')) available.add(moduleName(line.slice(0, line.indexOf(':'))));
    for (const line of root.text(`${dir}/modules.builtin`).split('\n')) if (line) builtin.add(moduleName(line));
    for (const line of root.text(`${dir}/modules.alias`).split('\n')) {
      const m = /^alias of:N\*T\*C(.+?)(?:C\*)? (\S+)$/.exec(line);
      if (m) claim(m[1], m[2]);
    }
    for (const entry of root.read(`${dir}/modules.builtin.modinfo`).toString('utf8').split('\0')) {
      const m = /^([^.]+)\.alias=of:N\*T\*C(.+?)(?:C\*)?$/.exec(entry);
      if (m) claim(m[2], m[1].replace(/-/g, '_'));
      // Built-in drivers that cannot be modules (bool options) are only here, not in modules.builtin.
      const named = /^([^.=]+)\./.exec(entry);
      if (named) builtin.add(named[1].replace(/-/g, '_'));
    }
    for (const f of initramfsFiles(root.read(`/boot/initrd.img-${kver}`))) if (/\.ko(\.[a-z]+)?$/.test(f)) inInitramfs.add(moduleName(f));
    config = readFileSync(join(boot, 'config.txt'), 'utf8');
    uboot = readFileSync(join(boot, 'u-boot.bin'));
    console.log(`# card: kernel ${kver}; ${available.size} modules, ${builtin.size} built in, ${inInitramfs.size} in the initramfs`);
  });
  after(() => { if (boot) rmSync(boot, { recursive: true, force: true }); });

  /** The drivers (module names) that claim any of a node's compatibles. */
  const driversOf = (node: DtNode) => strings(node, 'compatible').flatMap((c) => [...(drivers.get(c) ?? [])]);

  /** Nodes an SD controller waits for before it probes: its supplies (and theirs), the GPIO
   *  controllers of its and their GPIOs, its and their pin controllers, its clocks' providers. */
  function suppliers(nodes: DtNode[], start: DtNode): DtNode[] {
    const byPhandle = new Map<number, DtNode>();
    for (const n of nodes) { const p = n.props.get('phandle'); if (p) byPhandle.set(p.readUInt32BE(0), n); }
    const parentWithCompatible = (n: DtNode) => {
      let path = n.path;
      for (;;) {
        path = path.slice(0, path.lastIndexOf('/')) || '/';
        const p = nodes.find((x) => x.path === path);
        if (!p || path === '/') return undefined;
        if (strings(p, 'compatible').length) return p;
      }
    };
    // A phandle list with arguments: each entry is the provider's phandle and its #cells cells.
    const providers = (n: DtNode, prop: string, cells: string | null) => {
      const v = n.props.get(prop);
      const out: DtNode[] = [];
      for (let i = 0; v && i + 4 <= v.length;) {
        const p = byPhandle.get(v.readUInt32BE(i));
        if (!p) break;
        out.push(p);
        i += 4 + 4 * (cells ? p.props.get(cells)?.readUInt32BE(0) ?? 0 : 0);
      }
      return out;
    };
    const seen = new Set<DtNode>([start]);
    const queue = [start];
    while (queue.length) {
      const n = queue.shift()!;
      const next: (DtNode | undefined)[] = [];
      for (const prop of n.props.keys()) {
        if (prop.endsWith('-supply')) next.push(...providers(n, prop, null));
        else if (prop === 'gpios' || prop.endsWith('-gpios')) next.push(...providers(n, prop, '#gpio-cells'));
        // The controller's own clocks; not a clock provider's inputs (a clock controller does not
        // wait for every PLL source it could mux, e.g. the BCM2835's DSI PLLs).
        else if (prop === 'clocks' && n === start) next.push(...providers(n, prop, '#clock-cells'));
        else if (/^pinctrl-\d+$/.test(prop)) next.push(...providers(n, prop, null).map((s) => (strings(s, 'compatible').length ? s : parentWithCompatible(s))));
        else if (prop === 'mboxes') next.push(...providers(n, prop, '#mbox-cells'));
      }
      // A provider inside a firmware or controller node works through it (firmware clocks).
      if (n !== start && n.path.split('/').length > 3) next.push(parentWithCompatible(n));
      for (const s of next) if (s && !seen.has(s)) { seen.add(s); queue.push(s); }
    }
    seen.delete(start);
    return [...seen].filter((s) => !strings(s, 'compatible').every((c) => CORE.has(c)));
  }

  test("the card carries one kernel, the one U-Boot's boot script loads", () => {
    assert.match(kver, /^\d+\.\d+/);
  });

  test('config.txt: 64-bit, U-Boot for every board, the mainline kernel\'s device tree names', () => {
    const common = effectiveConfig(config, []).settings;
    assert.equal(common.get('arm_64bit'), '1');
    assert.equal(common.get('kernel'), 'u-boot.bin');
    assert.equal(common.get('upstream_kernel'), '1');
  });

  for (const board of boards) {
    describe(board.name, () => {
      test(`config.txt has its section [${board.section}], and what it reads there names files on the card`, () => {
        const { settings, sections } = effectiveConfig(config, board.filters);
        assert.ok(sections.includes(board.section), `config.txt sections: ${sections.join(' ')}`);
        assert.equal(sections[sections.length - 1], 'all', 'the last section is [all]: lines added later apply to every board');
        const named = ['kernel', 'device_tree', 'initramfs', 'start_file', 'fixup_file', 'armstub'].map((k) => settings.get(k)?.split(/\s+/)[0]).filter((f): f is string => !!f);
        assert.ok(named.includes('u-boot.bin'), `the board loads U-Boot: ${named.join(' ')}`);
        for (const f of named) assert.ok(existsSync(join(boot, f)), `config.txt names ${f}, which the boot partition lacks`);
      });

      test(`the firmware files its boot loads: ${board.firmware.length ? board.firmware.join(', ') : 'none (the EEPROM bootloader reads config.txt itself)'}`, () => {
        const gpuMem = Number(effectiveConfig(config, board.filters).settings.get('gpu_mem') ?? 64);
        // The firmware runs its cut-down variant when the GPU has 16 MB (config.txt, gpu_mem).
        const needed = gpuMem <= 16 ? [board.firmware.filter((f) => f === 'bootcode.bin'), board.cutDownFirmware].flat() : board.firmware;
        for (const f of needed) assert.ok(existsSync(join(boot, f)), `boot partition lacks ${f} (gpu_mem=${gpuMem})`);
      });

      for (const dtbName of board.dtbs) {
        test(`${dtbName}: on the boot partition; the SD card's driver and what it waits for in the initramfs; U-Boot drives it`, () => {
          const path = join(boot, dtbName);
          assert.ok(existsSync(path), `boot partition lacks ${dtbName}`);
          const nodes = parseDtb(readFileSync(path));
          // The card slot, not a soldered SDIO device on the same kind of controller (the Pi 5's Wi-Fi).
          const sd = board.sd.compatible!.flatMap((c) => enabledNodes(nodes, c)).filter((n) => !n.props.has('non-removable'));
          assert.ok(sd.length > 0, `${dtbName} has no enabled ${board.sd.compatible!.join('/')} (${board.sd.what})`);
          for (const node of sd) {
            const ds = driversOf(node);
            assert.ok(ds.some((d) => board.sd.modules.includes(d)), `${node.path}: drivers ${ds.join(', ') || 'none'}, expected one of ${board.sd.modules.join(', ')}`);
            assert.ok(ds.some(atBoot), `${node.path} (${board.sd.what}): none of ${ds.join(', ')} in the initramfs or built in`);
            for (const s of suppliers(nodes, node)) {
              const sds = driversOf(s);
              assert.ok(sds.some(atBoot), `${node.path} waits for ${s.path} (${strings(s, 'compatible').join(' ')}), whose driver (${sds.join(', ') || 'none known'}) is not in the initramfs or built in`);
            }
          }
          for (const m of board.sd.modules) assert.ok(atBoot(m), `${m} (${board.sd.what}) is not in the initramfs or built in`);
          // U-Boot (kernel=u-boot.bin) loads the slot's kernel from the SD card: it must know the controller.
          assert.ok(board.sd.compatible!.some((c) => uboot.includes(Buffer.from(`${c}\0`))), `u-boot.bin has no driver for ${board.sd.compatible!.join('/')}`);
        });

        test(`${dtbName}: the modules its ${board.devices.map((d) => d.what.replace(/ \(.*/, '')).join(', ')} need, in the module tree`, () => {
          const nodes = parseDtb(readFileSync(join(boot, dtbName)));
          for (const device of board.devices) {
            for (const m of device.modules) assert.ok(loadable(m), `${device.what}: module ${m} missing from the card's kernel ${kver}`);
            if (!device.compatible) continue;
            const found = device.compatible.flatMap((c) => enabledNodes(nodes, c));
            assert.ok(found.length > 0, `${dtbName} has no enabled ${device.compatible.join('/')} (${device.what})`);
            for (const node of found) {
              const ds = driversOf(node);
              assert.ok(ds.some((d) => device.modules.includes(d) && loadable(d)), `${node.path} (${device.what}): its drivers ${ds.join(', ') || 'none'} are not ${device.modules.join('/')}`);
            }
          }
        });
      }
    });
  }
});
