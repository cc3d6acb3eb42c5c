// A known printer's identity (serial, printer-uuid) seen at another address: a printer renumbered
// by DHCP, or a host claiming to be it. move-check.ts judges the evidence; this reads what the
// judgement needs (does the saved address still answer as the printer? what MAC does the box see
// at the new one?) and carries the decision out: the record follows its printer by itself, with a
// log line and an event saying from where to where, or it keeps its address and history and gets
// a pending move that a person confirms.
import type { Device } from '../model/device.js';
import type { Reading } from '../store/devices.js';
import type { HostReadResult } from '../snmp/scan.js';
import { parsePrinter } from '../snmp/parse/printer.js';
import type { DiscoveryContext } from './context.js';
import { flagIfCounterDown } from './counter-check.js';
import { mergeObservation } from './merge.js';
import type { Observation } from '../model/observation.js';
import { atNewAddress, judgeSighting, pendingMoveOf, rememberIdentity, withTrustChange, type Fingerprint } from './move-check.js';
import { readIppDevice, sameIppPrinter, withIppTarget, type AnnouncedRead } from './announced.js';
import { toObservation } from './snmp-observation.js';
import { ReadingsKeptError } from '../store/store-readings.js';

export class Sightings {
  constructor(private readonly ctx: DiscoveryContext) {}

  /** The neighbour MAC and SNMPv3 engine ID seen at a trusted reading, remembered on the record. */
  trusted(device: Device, host: Pick<HostReadResult, 'address' | 'engineId'>): Device {
    return rememberIdentity(device, { neighbour_mac: this.ctx.neighbour(host.address), engine_id: host.engineId });
  }

  /**
   * Whether the record's own address still answers as this printer now: by SNMP, or by IPP for a
   * printer seen only by IPP (one read, the usual timeout). Anything else there (silence, another
   * printer that took the address) counts as not answering.
   */
  async savedAddressAnswers(d: Device): Promise<boolean> {
    try {
      if (d.source_type === 'ipp') {
        const read = await readIppDevice(d, this.ctx.readContext());
        return !('error' in read) && sameIppPrinter(d, read.observation);
      }
      const host = await this.ctx.readOne(d.ip);
      if (!host) return false;
      const now = this.ctx.now();
      return toObservation(parsePrinter(host.values, d.ip, new Date(now)), d.ip, now)?.serial === d.serial;
    } catch {
      return false; // outside allowed_ranges, or not an address at all: it does not answer
    }
  }

  /**
   * An SNMP reply with `existing`'s serial from another address (a scan's, or a poll of a pending
   * address). Returns the reading to store when the record moved and `forRound` (a polling round
   * writes it with its other readings); otherwise a move is stored here.
   */
  async fromSnmp(existing: Device, host: HostReadResult, o: Observation, savedAnswers?: boolean, forRound = false): Promise<Reading | undefined> {
    const mac = this.ctx.neighbour(host.address);
    const fp: Fingerprint = {
      ip: host.address,
      ...(mac ? { neighbour_mac: mac } : {}),
      ...(o.fields.mac_address ? { reported_mac: o.fields.mac_address } : {}),
      ...(host.engineId ? { engine_id: host.engineId } : {}),
      snmp: host.securityLevel,
      ...identityOf(o),
    };
    const answers = savedAnswers ?? (await this.savedAddressAnswers(existing));
    // A move stores its reading (decide() checks its counter first): an earlier counter flag no longer stands.
    return this.decide(existing.serial, fp, answers, (current) => {
      const snapshot = { serial: current.serial, ts: o.now, ...parsePrinter(host.values, host.address, new Date(o.now)).metrics };
      const moved = this.trusted(mergeObservation(atNewAddress(current, host.address, { counter_flag: undefined }), { ...o, ip: host.address }), host);
      return { device: moved, snapshot, existed: true, fromIp: current.ip };
    }, forRound);
  }

  /** An announced (IPP) read that names a known printer at another address. */
  async fromAnnouncement(existing: Device, read: AnnouncedRead): Promise<void> {
    const o = read.observation;
    const mac = this.ctx.neighbour(o.ip);
    const fp: Fingerprint = { ip: o.ip, ...(mac ? { neighbour_mac: mac } : {}), snmp: 'ipp', ...identityOf(o) };
    const answers = await this.savedAddressAnswers(existing);
    await this.decide(existing.serial, fp, answers, (current) => {
      const merged = mergeObservation(atNewAddress(current, o.ip, { counter_flag: undefined }), { ...o, serial: current.serial, printerInfo: { ...o.printerInfo, serial: current.serial } });
      const device = rememberIdentity(withIppTarget(merged, read.ipp), { neighbour_mac: mac });
      return { device, snapshot: { serial: current.serial, ts: o.now, ...read.metrics }, existed: true, fromIp: current.ip };
    });
  }

  /** Reads a device's pending address; the reading to store when the move is made there and then. */
  async pollPendingAddress(device: Device): Promise<Reading | undefined> {
    const pending = pendingMoveOf(device);
    if (!pending) return undefined;
    let host: HostReadResult | null = null;
    try {
      host = await this.ctx.readOne(pending.ip);
    } catch {
      return undefined;
    }
    if (!host || host.partial) return undefined;
    const now = this.ctx.now();
    const o = toObservation(parsePrinter(host.values, pending.ip, new Date(now)), pending.ip, now);
    if (o?.serial !== device.serial) return undefined;
    // The saved address was just read and did not answer.
    return this.fromSnmp(device, host, o, false, true);
  }

  /**
   * Judges a sighting of `serial` (move-check.ts) against the record as it is now and carries the
   * decision out. `movedReading` builds what is stored when the record follows its printer.
   */
  private async decide(serial: string, fp: Fingerprint, savedAnswers: boolean, movedReading: (current: Device) => Reading, forRound = false): Promise<Reading | undefined> {
    const { devices, log } = this.ctx.deps;
    if (this.ctx.stopped) return undefined;
    const current = devices.get(serial);
    if (!current || current.ip === fp.ip) return undefined; // deleted, or moved meanwhile
    const now = this.ctx.now();
    const decision = judgeSighting(current, fp, now, savedAnswers);
    if (decision.move) {
      const reading = movedReading(current);
      if (flagIfCounterDown(this.ctx, serial, reading.snapshot, fp.ip, now)) return undefined; // a person decides both
      log.warn({ serial, from: current.ip, to: fp.ip, checks: decision.checks }, `printer moved from ${current.ip} to ${fp.ip}: its identity answers there, the MAC the box sees matches, the old address is silent`);
      if (forRound) return reading;
      this.storeMoved(reading);
      return undefined;
    }
    log.warn({ serial, saved_ip: current.ip, ip: fp.ip, checks: decision.pending.checks, via: fp.snmp }, `printer identity seen at another address: not stored, move pending (${decision.pending.reason})`);
    this.ctx.writer.put(withTrustChange(current, { pending_move: decision.pending }), 'updated', 'noting a pending move');
    return undefined;
  }

  /** A proven move, stored at once (a polling round writes its moves with its other readings). */
  private storeMoved(reading: Reading): void {
    try {
      this.ctx.writer.store([reading], 'storing a moved printer', () => 'updated', movedOf);
    } catch (err) {
      if (!(err instanceof ReadingsKeptError)) throw err;
    }
  }
}

/** The move a reading makes, if any: for the change event. */
export function movedOf(r: Reading): { from: string; to: string } | undefined {
  return r.fromIp !== undefined && r.fromIp !== r.device.ip ? { from: r.fromIp, to: r.device.ip } : undefined;
}

function identityOf(o: Observation): Pick<Fingerprint, 'model' | 'manufacturer'> {
  return { ...(o.fields.model ? { model: o.fields.model } : {}), ...(o.fields.manufacturer ? { manufacturer: o.fields.manufacturer } : {}) };
}
