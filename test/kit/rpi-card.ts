// Test helper: reads a built Raspberry Pi card (build/arm64/printbox-rpi.img) as a board would
// find it, without mounting anything: the partition table (MBR), the boot partition's files (FAT,
// through mtools), root slot A's files (ext4, through debugfs), the initramfs in it (cpio, zstd),
// and device trees (the flattened format the firmware hands on).
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { zstdDecompressSync } from 'node:zlib';

export interface Partition { start: number; size: number; type: number }

/** The four primary partitions of an MBR disk image, in bytes. */
export function mbrPartitions(image: string): Partition[] {
  const head = Buffer.alloc(512);
  const fd = openSync(image, 'r');
  try { readSync(fd, head, 0, 512, 0); } finally { closeSync(fd); }
  if (head.readUInt16LE(510) !== 0xaa55) throw new Error(`${image}: no MBR signature`);
  const parts: Partition[] = [];
  for (let i = 0; i < 4; i++) {
    const e = 446 + 16 * i;
    parts.push({ type: head[e + 4], start: head.readUInt32LE(e + 8) * 512, size: head.readUInt32LE(e + 12) * 512 });
  }
  return parts;
}

/** Copies every file of the FAT partition at `offset` into a new directory; returns it. */
export function copyFat(image: string, offset: number): string {
  const dir = mkdtempSync(join(tmpdir(), 'printbox-card-boot-'));
  execFileSync('mcopy', ['-s', '-n', '-i', `${image}@@${offset}`, '::*', dir], { env: { ...process.env, MTOOLS_SKIP_CHECK: '1' } });
  return dir;
}

/** An ext4 file system inside a disk image, read with debugfs (no mount, no root needed). */
export class Ext4 {
  constructor(private readonly image: string, private readonly offset: number) {}
  private debugfs(request: string, encoding: 'utf8' | 'buffer' = 'utf8'): string | Buffer {
    return execFileSync('debugfs', ['-R', request, `${this.image}?offset=${this.offset}`], {
      encoding: encoding === 'utf8' ? 'utf8' : undefined, maxBuffer: 512 * 1024 * 1024, stdio: ['ignore', 'pipe', 'ignore'],
    }) as string | Buffer;
  }
  /** Names in a directory (without . and ..). */
  ls(dir: string): string[] {
    const out = this.debugfs(`ls -p ${dir}`) as string;
    // -p: /inode/mode/uid/gid/name/size/
    return out.split('\n').map((l) => l.split('/')[5]).filter((n): n is string => !!n && n !== '.' && n !== '..');
  }
  read(path: string): Buffer { return this.debugfs(`cat ${path}`, 'buffer') as Buffer; }
  text(path: string): string { return this.read(path).toString('utf8'); }
  /** A symbolic link's target, or null when `path` is not one. */
  linkTarget(path: string): string | null {
    const m = /Fast link dest: "([^"]*)"/.exec(this.debugfs(`stat ${path}`) as string);
    return m ? m[1] : null;
  }
}

/** The file names in an initramfs: its cpio archives (newc), plain or zstd-compressed, one after another. */
export function initramfsFiles(data: Buffer): string[] {
  const names: string[] = [];
  let buf = data;
  let pos = 0;
  for (;;) {
    while (pos < buf.length && buf[pos] === 0) pos++; // padding between archives
    if (pos >= buf.length) break;
    if (buf.readUInt32BE(pos) === 0x28b52ffd) { buf = zstdDecompressSync(buf.subarray(pos)); pos = 0; continue; }
    if (buf.toString('latin1', pos, pos + 6) !== '070701') throw new Error(`initramfs: unknown data at byte ${pos}`);
    for (;;) {
      const field = (i: number) => parseInt(buf.toString('latin1', pos + 6 + 8 * i, pos + 14 + 8 * i), 16);
      const fileSize = field(6);
      const nameSize = field(11);
      const name = buf.toString('utf8', pos + 110, pos + 110 + nameSize - 1);
      pos = (pos + 110 + nameSize + 3) & ~3;
      pos = (pos + fileSize + 3) & ~3;
      if (name === 'TRAILER!!!') break;
      names.push(name);
    }
  }
  return names;
}

export interface DtNode { path: string; props: Map<string, Buffer> }

/** Every node of a flattened device tree (DTB) with its properties. */
export function parseDtb(dtb: Buffer): DtNode[] {
  if (dtb.readUInt32BE(0) !== 0xd00dfeed) throw new Error('not a flattened device tree');
  const structOff = dtb.readUInt32BE(8);
  const stringsOff = dtb.readUInt32BE(12);
  const nodes: DtNode[] = [];
  const stack: DtNode[] = [];
  let p = structOff;
  const align = () => { p = (p + 3) & ~3; };
  for (;;) {
    const token = dtb.readUInt32BE(p); p += 4;
    if (token === 1) { // FDT_BEGIN_NODE
      const end = dtb.indexOf(0, p);
      const name = dtb.toString('utf8', p, end);
      p = end + 1; align();
      const parent = stack[stack.length - 1];
      const node = { path: parent ? `${parent.path === '/' ? '' : parent.path}/${name}` : '/', props: new Map<string, Buffer>() };
      nodes.push(node); stack.push(node);
    } else if (token === 2) { stack.pop(); // FDT_END_NODE
    } else if (token === 3) { // FDT_PROP
      const len = dtb.readUInt32BE(p); const nameOff = dtb.readUInt32BE(p + 4); p += 8;
      const nameEnd = dtb.indexOf(0, stringsOff + nameOff);
      stack[stack.length - 1].props.set(dtb.toString('utf8', stringsOff + nameOff, nameEnd), dtb.subarray(p, p + len));
      p += len; align();
    } else if (token === 4) { // FDT_NOP
    } else if (token === 9) { break; // FDT_END
    } else throw new Error(`device tree: bad token ${token}`);
  }
  return nodes;
}

/** A node's string-list property (compatible), split. */
export function strings(node: DtNode, prop: string): string[] {
  const v = node.props.get(prop);
  return v ? v.toString('utf8').split('\0').filter(Boolean) : [];
}

/** Nodes that are enabled (no status, or "okay"/"ok") and claim `compatible`. */
export function enabledNodes(nodes: DtNode[], compatible: string): DtNode[] {
  return nodes.filter((n) => strings(n, 'compatible').includes(compatible) && ['okay', 'ok', undefined].includes(strings(n, 'status')[0]));
}

/** The effective config.txt settings on a board whose filters are `filters` (e.g. ['pi4', 'pi400']):
 *  the lines outside any section or under [all], and those under a filter the board matches, in
 *  order (the last value of a setting wins, as the firmware reads it). */
export function effectiveConfig(configTxt: string, filters: string[]): { settings: Map<string, string>; lines: string[]; sections: string[] } {
  const settings = new Map<string, string>();
  const lines: string[] = [];
  const sections: string[] = [];
  let applies = true;
  for (const raw of configTxt.split(/\r?\n/)) {
    const line = raw.replace(/#.*/, '').trim();
    if (!line) continue;
    const section = /^\[([^\]]+)\]$/.exec(line);
    if (section) {
      sections.push(section[1]);
      applies = section[1] === 'all' || section[1] === 'none' ? section[1] === 'all' : filters.includes(section[1]);
      continue;
    }
    if (!applies) continue;
    lines.push(line);
    const kv = /^([A-Za-z0-9_]+)\s*=\s*(.*)$/.exec(line) ?? /^(initramfs)\s+(.*)$/.exec(line);
    if (kv) settings.set(kv[1], kv[2].trim());
  }
  return { settings, lines, sections };
}
