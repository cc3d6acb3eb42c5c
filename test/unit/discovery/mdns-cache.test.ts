// The mDNS record cache (src/discovery/mdns-cache.ts) on a fake clock, fed packets built with
// dns-packet (encoded and decoded, as they come off the wire): liveness of printers that keep
// re-announcing, expiry of one that stops, goodbyes, address changes, and what a flood costs.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as dnsPacket from 'dns-packet';
import type { Answer, Packet } from 'dns-packet';
import { MdnsCache, type CacheEvent, type CacheResult, type Question } from '../../../src/discovery/mdns-cache.js';

const FROM = { address: '10.0.0.20', port: 5353 };

/** A printer's announcement as a responder sends it: PTR, SRV, TXT and A, SRV/TXT/A with the cache-flush bit. */
function announcement(o: { instance?: string; type?: string; host?: string; address?: string; port?: number; ttl?: number; aTtl?: number; txt?: string[] } = {}): Packet {
  const type = o.type ?? '_ipp._tcp.local';
  const instance = `${o.instance ?? 'Lab Printer'}.${type}`;
  const host = o.host ?? 'lab-printer.local';
  const ttl = o.ttl ?? 60;
  const answers: Answer[] = [
    { type: 'PTR', name: type, ttl, data: instance },
    { type: 'SRV', name: instance, ttl, flush: true, data: { target: host, port: o.port ?? 631, priority: 0, weight: 0 } },
    { type: 'TXT', name: instance, ttl, flush: true, data: o.txt ?? ['rp=ipp/print', 'ty=Acme Laser 9'] },
    { type: 'A', name: host, ttl: o.aTtl ?? ttl, flush: true, data: o.address ?? FROM.address },
  ];
  return wire({ type: 'response', flags: dnsPacket.AUTHORITATIVE_ANSWER, answers });
}

const wire = (p: Packet): Packet => dnsPacket.decode(dnsPacket.encode(p));

function fixture(limits = {}) {
  let t = 1_000_000;
  const cache = new MdnsCache({ now: () => t, random: () => 0.5, limits });
  const events: CacheEvent[] = [];
  const questions: { at: number; q: Question }[] = [];
  const take = (r: CacheResult) => {
    events.push(...r.events);
    for (const q of r.questions) questions.push({ at: t, q });
  };
  return {
    cache,
    events,
    questions,
    now: () => t,
    ingest: (p: Packet, from = FROM) => take(cache.ingest(p, from)),
    /** Moves the clock on, ticking every 500 ms as the listener does. */
    advance(ms: number) {
      const end = t + ms;
      while (t < end) {
        t = Math.min(end, t + 500);
        take(cache.tick());
      }
    },
  };
}

const changed = (events: CacheEvent[]) => events.filter((e) => e.kind === 'changed');
const gone = (events: CacheEvent[]) => events.filter((e) => e.kind === 'gone');

describe('mDNS record cache', () => {
  it('a printer re-announcing with TTL 60 every 10 s for 10 minutes: one announce, never gone, no re-queries', () => {
    const f = fixture();
    for (let i = 0; i < 60; i++) {
      f.ingest(announcement());
      f.advance(10_000);
    }
    assert.deepEqual(f.events, [{ kind: 'changed', address: '10.0.0.20' }]);
    assert.deepEqual(f.questions, [], 'refreshed before 80 % of its TTL: nothing to ask');
    const p = f.cache.printerAt('10.0.0.20')!;
    assert.equal(p.name, 'Lab Printer');
    assert.equal(p.host, 'lab-printer.local');
    assert.deepEqual(p.services, ['_ipp._tcp']);
    assert.deepEqual(p.ipp, { port: 631, tls: false, resource: '/ipp/print' });
    assert.equal(p.txt.ty, 'Acme Laser 9');
  });

  it('a responder that stops (no goodbye): asked again at 80, 85, 90 and 95 % of the TTL, then gone "expired" at its end', () => {
    const f = fixture();
    f.ingest(announcement({ ttl: 100 }));
    const start = f.now();
    f.advance(99_500);
    assert.deepEqual(gone(f.events), [], 'still alive before the TTL ends');
    // Each record is asked for at 80-95 % (+1 % jitter with random 0.5): PTR, SRV, TXT and A, each four times.
    const at = (type: string) => f.questions.filter((x) => x.q.type === type).map((x) => Math.round(((x.at - start) / 100_000) * 100));
    for (const type of ['PTR', 'SRV', 'TXT', 'A']) assert.deepEqual(at(type), [81, 86, 91, 96], type);
    assert.equal(f.questions.find((x) => x.q.type === 'PTR')!.q.name, '_ipp._tcp.local');
    assert.equal(f.questions.find((x) => x.q.type === 'A')!.q.name, 'lab-printer.local');
    f.advance(1000);
    assert.deepEqual(gone(f.events), [{ kind: 'gone', address: '10.0.0.20', name: 'Lab Printer', host: 'lab-printer.local', why: 'expired' }]);
    assert.equal(f.cache.printerAt('10.0.0.20'), undefined);
    assert.equal(f.cache.size().instances, 0);
  });

  it('Avahi TTLs (PTR/TXT 4500 s, SRV/A 120 s) answered at the re-query: alive for hours; unanswered: expired at 120 s', () => {
    const f = fixture();
    const avahi = () => {
      const p = announcement({ ttl: 4500 });
      for (const a of p.answers!) if (a.type === 'SRV' || a.type === 'A') a.ttl = 120;
      return p;
    };
    f.ingest(avahi());
    for (let i = 0; i < 3 * 3600; i += 1) {
      f.advance(1000);
      // Answer the SRV/A re-queries, as Avahi does (it never re-announces by itself).
      if (f.questions.length) {
        f.questions.length = 0;
        f.ingest(avahi());
      }
    }
    assert.equal(changed(f.events).length, 1);
    assert.deepEqual(gone(f.events), [], 'not gone after 3 hours of answered re-queries');
    f.advance(121_000);
    assert.deepEqual(gone(f.events).map((e) => e.kind === 'gone' && e.why), ['expired'], 'a power cut is noticed at the SRV/A TTL');
  });

  it('TTL 0 is a goodbye: gone "goodbye" 1 s later; announced again within the second, nothing happens', () => {
    const f = fixture();
    f.ingest(announcement());
    const bye = announcement({ ttl: 0 });
    f.ingest(bye);
    f.ingest(announcement());
    f.advance(5000);
    assert.equal(gone(f.events).length, 0, 'the re-announcement kept it');
    assert.equal(changed(f.events).length, 1, 'and was no change');
    f.ingest(bye);
    f.advance(500);
    assert.equal(gone(f.events).length, 0, 'kept for 1 s');
    f.advance(500);
    assert.deepEqual(gone(f.events), [{ kind: 'gone', address: '10.0.0.20', name: 'Lab Printer', host: 'lab-printer.local', why: 'goodbye' }]);
  });

  it('the last service of an address: a printer with _ipp and _ipps is gone when both are', () => {
    const f = fixture();
    f.ingest(announcement());
    f.ingest(announcement({ type: '_ipps._tcp.local' }));
    assert.deepEqual(f.cache.printerAt('10.0.0.20')!.services, ['_ipp._tcp', '_ipps._tcp']);
    f.ingest(announcement({ ttl: 0 }));
    f.advance(2000);
    assert.deepEqual(gone(f.events), []);
    assert.deepEqual(f.cache.printerAt('10.0.0.20')!.ipp, { port: 631, tls: true, resource: '/ipp/print' });
    f.ingest(announcement({ type: '_ipps._tcp.local', ttl: 0 }));
    f.advance(2000);
    assert.equal(gone(f.events).length, 1);
  });

  it('a changed TXT or port is a change; the same again is not', () => {
    const f = fixture();
    f.ingest(announcement());
    f.ingest(announcement({ txt: ['rp=ipp/print', 'ty=Acme Laser 9', 'note=Room 2'] }));
    f.ingest(announcement({ txt: ['rp=ipp/print', 'ty=Acme Laser 9', 'note=Room 2'] }));
    f.ingest(announcement({ port: 8631, txt: ['rp=ipp/print', 'ty=Acme Laser 9', 'note=Room 2'] }));
    assert.equal(changed(f.events).length, 3);
    assert.equal(f.cache.printerAt('10.0.0.20')!.ipp!.port, 8631);
    assert.equal(f.cache.printerAt('10.0.0.20')!.txt.note, 'Room 2');
  });

  it('an A record change: announced at the new address with previousAddress, the old address no longer reported, no goodbye', () => {
    const f = fixture();
    f.ingest(announcement());
    f.advance(5000);
    f.ingest(announcement({ address: '10.0.0.21' }));
    assert.deepEqual(changed(f.events).at(-1), { kind: 'changed', address: '10.0.0.21', previousAddress: '10.0.0.20' });
    assert.equal(f.cache.printerAt('10.0.0.20'), undefined);
    assert.equal(f.cache.printerAt('10.0.0.21')!.name, 'Lab Printer');
    f.advance(30_000);
    f.ingest(announcement({ address: '10.0.0.21' }));
    f.advance(30_000);
    assert.deepEqual(gone(f.events), [], 'the old address is not said goodbye for');
  });

  it('TTLs above 75 min are clamped to 4500 s', () => {
    const f = fixture();
    f.ingest(announcement({ ttl: 86_400 }));
    f.advance(4499_000);
    assert.deepEqual(gone(f.events), []);
    assert.equal(f.questions.find((x) => x.q.type === 'SRV')!.at - 1_000_000, Math.round(4500_000 * 0.81), 'first re-query at 81 % of 4500 s');
    f.advance(1000);
    assert.equal(gone(f.events).length, 1);
  });

  it('caps: 32 instances per source address and 1024 in all; beyond them dropped and counted', () => {
    const f = fixture({ packetsPerSecond: 1e9 });
    for (let i = 0; i < 40; i++) f.ingest(announcement({ instance: `P${i}`, host: `h${i}.local` }));
    assert.equal(f.cache.size().instances, 32);
    assert.equal(f.cache.dropped().over_caps, 8);
    for (let s = 0; s < 40; s++) {
      const from = { address: `10.0.${1 + s}.1`, port: 5353 };
      for (let i = 0; i < 32; i++) f.ingest(announcement({ instance: `S${s}-${i}`, host: `s${s}h${i}.local`, address: from.address }), from);
    }
    assert.equal(f.cache.size().instances, 1024);
    assert.equal(f.cache.dropped().over_caps, 8 + 40 * 32 + 32 - 1024);
    // A known instance is still refreshed at the cap.
    f.ingest(announcement({ instance: 'P0', host: 'h0.local', txt: ['rp=ipp/print', 'note=new'] }));
    assert.equal(f.cache.printerAt('10.0.0.20')!.txt.note, 'new');
  });

  it('rate limit: a source beyond 50 packets/s is dropped and counted; others are not held back', () => {
    const f = fixture();
    for (let i = 0; i < 200; i++) f.ingest(announcement({ instance: `X${i % 5}`, host: 'x.local' }));
    assert.equal(f.cache.dropped().rate_limited, 150);
    f.ingest(announcement({ instance: 'Other', host: 'o.local', address: '10.0.0.30' }), { address: '10.0.0.30', port: 5353 });
    assert.ok(f.cache.printerAt('10.0.0.30'), 'another source is read');
    f.advance(1000);
    f.ingest(announcement({ instance: 'Late', host: 'x.local' }));
    assert.equal(f.cache.dropped().rate_limited, 150, 'the bucket refills');
    assert.ok(f.cache.printerAt('10.0.0.20')!.services.length);
  });

  it('a flood of 20 unique names x 600 packets (10 packets/s) keeps the cache at its cap', () => {
    const f = fixture();
    let n = 0;
    const flood = (source: string) => {
      const answers: Answer[] = [];
      for (let i = 0; i < 20; i++) {
        const instance = `Flood ${n++}._ipp._tcp.local`;
        answers.push({ type: 'PTR', name: '_ipp._tcp.local', ttl: 4500, data: instance });
        answers.push({ type: 'SRV', name: instance, ttl: 4500, flush: true, data: { target: `f${n}.local`, port: 631 } });
        answers.push({ type: 'TXT', name: instance, ttl: 4500, flush: true, data: ['x'.repeat(200)] });
        answers.push({ type: 'A', name: `f${n}.local`, ttl: 4500, flush: true, data: source });
      }
      return wire({ type: 'response', answers });
    };
    // One source: capped at 32 instances.
    for (let i = 0; i < 600; i++) {
      f.ingest(flood('10.0.0.66'), { address: '10.0.0.66', port: 5353 });
      f.advance(100);
    }
    assert.equal(f.cache.size().instances, 32);
    assert.equal(f.cache.size().hosts, 32);
    assert.equal(f.cache.dropped().over_caps, 600 * 20 - 32);
    // Many sources (one per packet): capped at 1024 in all.
    for (let i = 0; i < 600; i++) {
      const src = `10.1.${i >> 8}.${i & 255}`;
      f.ingest(flood(src), { address: src, port: 5353 });
      f.advance(100);
    }
    assert.equal(f.cache.size().instances, 1024);
    assert.ok(f.cache.size().hosts <= 1024);
    assert.ok(f.cache.size().addresses <= 1024);
    // Nothing of it asks the LAN anything beyond resolving (every instance came complete).
    assert.deepEqual(f.questions, []);
  });

  it('an instance announced without SRV is asked for, and forgotten when nothing answers', () => {
    const f = fixture();
    f.ingest(wire({ type: 'response', answers: [{ type: 'PTR', name: '_ipp._tcp.local', ttl: 4500, data: 'Lone._ipp._tcp.local' }] }));
    assert.deepEqual(f.questions.map((x) => x.q), [
      { name: 'lone._ipp._tcp.local', type: 'SRV' },
      { name: 'lone._ipp._tcp.local', type: 'TXT' },
    ]);
    f.advance(10_000);
    assert.equal(f.cache.size().instances, 0);
    assert.deepEqual(f.events, []);
  });

  it('without an A record the packet source is the address; the A is asked for once', () => {
    const f = fixture();
    const p = announcement();
    p.answers = p.answers!.filter((a) => a.type !== 'A');
    f.ingest(p);
    f.ingest(p);
    assert.deepEqual(f.cache.printerAt('10.0.0.20')!.address, '10.0.0.20');
    assert.deepEqual(f.questions.map((x) => x.q), [{ name: 'lab-printer.local', type: 'A' }]);
  });

  it('ignores what is not a browsed printer service, a response not from port 5353, and malformed records', () => {
    const f = fixture();
    f.ingest(wire({ type: 'response', answers: [{ type: 'PTR', name: '_http._tcp.local', ttl: 60, data: 'Web._http._tcp.local' }] }));
    f.ingest(announcement(), { address: '10.0.0.20', port: 40000 });
    f.ingest({ type: 'response', answers: [{ type: 'PTR', name: '_ipp._tcp.local', ttl: 60, data: 42 as unknown as string }, { type: 'SRV', name: 'x', ttl: 60, data: null as never }] });
    f.ingest({ type: 'query', questions: [{ name: '_ipp._tcp.local', type: 'PTR' }] });
    assert.equal(f.cache.size().instances, 0);
    assert.deepEqual(f.events, []);
  });
});
