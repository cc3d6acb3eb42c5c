import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  inAllowedRanges,
  localSubnets,
  localSubnetTargets,
  MAX_RANGE_ADDRESSES,
  parseCidr,
  parseIPv4,
  parseRangesText,
  RangeParseError,
  validateCidrList,
  validateRangesText,
} from '../../../src/shared/ranges.js';

describe('parseRangesText', () => {
  it('expands every entry form, skipping blanks and comments', () => {
    const text = [
      '# office printers',
      '',
      '10.0.0.5',
      '10.0.1.0/30   # two hosts',
      '10.0.2.10-12',
      '10.0.3.254-10.0.4.1',
      '   ',
      '10.0.5.*',
    ].join('\n');
    const out = parseRangesText(text);
    assert.deepEqual(out.slice(0, 10), [
      '10.0.0.5',
      '10.0.1.1',
      '10.0.1.2',
      '10.0.2.10',
      '10.0.2.11',
      '10.0.2.12',
      '10.0.3.254',
      '10.0.3.255',
      '10.0.4.0',
      '10.0.4.1',
    ]);
    const star = out.slice(10);
    assert.equal(star.length, 254);
    assert.equal(star[0], '10.0.5.1');
    assert.equal(star[253], '10.0.5.254');
  });

  it('CIDR excludes network and broadcast up to /30, keeps /31 and /32, clears host bits', () => {
    assert.equal(parseRangesText('192.168.1.77/24').length, 254);
    assert.deepEqual(parseRangesText('192.168.1.77/24').slice(0, 1), ['192.168.1.1']);
    assert.deepEqual(parseRangesText('192.168.1.4/31'), ['192.168.1.4', '192.168.1.5']);
    assert.deepEqual(parseRangesText('192.168.1.9/32'), ['192.168.1.9']);
    assert.equal(parseRangesText('10.0.0.0/20').length, 4094);
  });

  it('removes duplicates across lines, keeping first order; CRLF accepted', () => {
    assert.deepEqual(parseRangesText('10.0.0.2\r\n10.0.0.1-3\r\n10.0.0.2'), ['10.0.0.2', '10.0.0.1', '10.0.0.3']);
  });

  it('empty or comment-only text gives no targets', () => {
    assert.deepEqual(parseRangesText(''), []);
    assert.deepEqual(parseRangesText('# nothing\n\n  # here'), []);
  });

  it('rejects malformed entries with the line number', () => {
    const cases: [string, RegExp][] = [
      ['10.0.0.1\n10.0.0.256', /line 2/],
      ['10.0.0', /line 1/],
      ['\n\nfoo.bar', /line 3/],
      ['10.0.0.1/33', /line 1: .*CIDR/],
      ['10.0.0.10-5', /ends before it starts/],
      ['10.0.0.1-300', /last octet/],
      ['10.0.1.1-10.0.0.1', /ends before it starts/],
      ['10.0.*.*', /line 1/],
      ['fe80::1', /line 1/],
      ['010.0.0.1', /line 1/],
      ['printer.local', /line 1/],
    ];
    for (const [text, re] of cases) {
      assert.throws(() => parseRangesText(text), (e: unknown) => e instanceof RangeParseError && re.test(e.message), text);
    }
  });

  it('an expansion above 4096 addresses is an error naming the line', () => {
    assert.throws(
      () => parseRangesText('# big\n10.0.0.0/19'),
      (e: unknown) => e instanceof RangeParseError && e.line === 2 && /more than the limit of 4096/.test(e.message),
    );
    // Cumulative: 16 * 254 = 4064 fit, the 17th /24 does not.
    const lines = Array.from({ length: 17 }, (_, i) => `10.1.${i}.0/24`).join('\n');
    assert.throws(() => parseRangesText(lines), (e: unknown) => e instanceof RangeParseError && e.line === 17);
    assert.equal(parseRangesText(lines.split('\n').slice(0, 16).join('\n')).length, 16 * 254);
    assert.equal(MAX_RANGE_ADDRESSES, 4096);
    assert.equal(validateRangesText('10.0.0.0-10.0.16.0'), 'line 1: "10.0.0.0-10.0.16.0" expands to 4097 addresses, more than the limit of 4096');
    assert.equal(validateRangesText('10.0.0.0/24'), null);
  });
});

describe('inAllowedRanges', () => {
  it('empty list allows everything; otherwise only addresses inside', () => {
    assert.equal(inAllowedRanges('8.8.8.8', []), true);
    assert.equal(inAllowedRanges('8.8.8.8', undefined), true);
    assert.equal(inAllowedRanges('127.1.2.3', ['127.0.0.0/8']), true);
    assert.equal(inAllowedRanges('128.0.0.1', ['127.0.0.0/8']), false);
    assert.equal(inAllowedRanges('198.18.0.7', ['127.0.0.0/8', '198.18.0.0/24']), true);
    assert.equal(inAllowedRanges('198.18.1.7', ['127.0.0.0/8', '198.18.0.0/24']), false);
    assert.equal(inAllowedRanges('10.0.0.5', ['10.0.0.5']), true);
    assert.equal(inAllowedRanges('10.0.0.6', ['10.0.0.5/32']), false);
    assert.equal(inAllowedRanges('1.2.3.4', ['0.0.0.0/0']), true);
  });

  it('fails closed: non-IPv4 targets and broken entries match nothing', () => {
    assert.equal(inAllowedRanges('localhost', ['127.0.0.0/8']), false);
    assert.equal(inAllowedRanges('::1', ['127.0.0.0/8']), false);
    assert.equal(inAllowedRanges('127.0.0.1', ['garbage']), false);
  });

  it('validateCidrList names the bad entry', () => {
    assert.equal(validateCidrList(['127.0.0.0/8', '10.0.0.0/8']), null);
    assert.match(validateCidrList(['127.0.0.0/8', '10.0.0.0/40']) ?? '', /entry 2/);
    assert.match(validateCidrList([42]) ?? '', /entry 1/);
  });

  it('parseIPv4 / parseCidr', () => {
    assert.equal(parseIPv4('255.255.255.255'), 0xffffffff);
    assert.equal(parseIPv4('1.2.3'), null);
    assert.deepEqual(parseCidr('10.1.2.3/8'), { network: 0x0a000000, prefix: 8 });
  });
});

describe('local subnets', () => {
  const ifaces = {
    lo: [{ address: '127.0.0.1', netmask: '255.0.0.0', family: 'IPv4', mac: '00:00:00:00:00:00', internal: true, cidr: '127.0.0.1/8' }],
    eth0: [
      { address: '192.168.10.20', netmask: '255.255.255.0', family: 'IPv4', mac: 'aa:bb:cc:dd:ee:ff', internal: false, cidr: '192.168.10.20/24' },
      { address: 'fe80::1', netmask: 'ffff:ffff:ffff:ffff::', family: 'IPv6', mac: 'aa:bb:cc:dd:ee:ff', internal: false, cidr: 'fe80::1/64', scopeid: 2 },
    ],
    wlan0: [{ address: '10.9.8.6', netmask: '255.255.255.252', family: 'IPv4', mac: 'aa:bb:cc:dd:ee:01', internal: false, cidr: '10.9.8.6/30' }],
    ll0: [{ address: '169.254.3.4', netmask: '255.255.0.0', family: 'IPv4', mac: 'aa:bb:cc:dd:ee:02', internal: false, cidr: '169.254.3.4/16' }],
  } as unknown as Parameters<typeof localSubnets>[0];

  it('lists IPv4 subnets of non-internal interfaces', () => {
    assert.deepEqual(
      localSubnets(ifaces).map((s) => [s.iface, s.cidr]),
      [
        ['eth0', '192.168.10.0/24'],
        ['wlan0', '10.9.8.4/30'],
      ],
    );
  });

  it('targets exclude network, broadcast and the box itself', () => {
    const t = localSubnetTargets(ifaces);
    assert.equal(t.length, 253 + 1);
    assert.ok(!t.includes('192.168.10.0'));
    assert.ok(!t.includes('192.168.10.255'));
    assert.ok(!t.includes('192.168.10.20'));
    assert.ok(t.includes('192.168.10.1'));
    assert.deepEqual(t.slice(-1), ['10.9.8.5']);
  });

  it('a subnet above the cap is an error', () => {
    const big = { eth0: [{ address: '10.0.0.1', netmask: '255.255.0.0', family: 'IPv4', mac: '', internal: false, cidr: '10.0.0.1/16' }] } as unknown as Parameters<typeof localSubnets>[0];
    assert.throws(() => localSubnetTargets(big), /10\.0\.0\.0\/16/);
    // Clamped: the /20 holding the box's address, 4094 hosts less the box itself.
    const clamped = localSubnetTargets(big, undefined, { clampPrefix: 20 });
    assert.equal(clamped.length, 4093);
    assert.equal(clamped[0], '10.0.0.2');
    assert.equal(clamped[clamped.length - 1], '10.0.15.254');
    // The appliance's rule: never beyond the box's own /24.
    const own24 = localSubnetTargets(big, undefined, { clampPrefix: 24 });
    assert.equal(own24.length, 253);
    assert.deepEqual([own24[0], own24[own24.length - 1]], ['10.0.0.2', '10.0.0.254']);
  });

  it('runs on this machine without throwing', () => {
    assert.ok(Array.isArray(localSubnets()));
  });
});
