// Who made a printer and what it is called, as a technician names it (the label on the box).
//
// Brand: many printers are another maker's platform sold under their own name (UTAX on Kyocera,
// Develop on Konica Minolta, Gestetner / Lanier / Savin / NRG on Ricoh,
// FUJIFILM and Fuji Xerox under their own enterprise number, Dell on several makers). The name a
// printer writes about itself (1284 MFG/MDL, hrDeviceDescr, sysDescr) wins over the platform's
// enterprise number; an enterprise number alone names a brand only where it has one line.
//
// Model: the first source that yields one, in order: 1284 MDL, the vendor's model OID,
// hrDeviceDescr, sysDescr; each cleaned of the brand prefix, firmware versions, Dell service
// tags, the serial and a trailing "series". Texts that describe a platform or an interface card
// rather than a model ("Printing System", "Network Printer", "ZebraNet Wired PS") are no model.

interface Brand {
  name: string;
  /** The brand written in a printer's own texts. */
  text?: RegExp;
  /** sysObjectID enterprise numbers that belong to this brand alone. */
  enterprises?: readonly number[];
}

// Rebadge names first: "TA_UTAX" on a Kyocera enterprise number is UTAX. Each rule here has a
// real recording or sysDescr in test/unit/snmp/parse.test.ts; a brand without one waits for one.
const BRANDS: readonly Brand[] = [
  { name: 'UTAX', text: /(^|[^a-z])utax\b/i },
  { name: 'Develop', text: /\bdevelop\b|\bineo\b/i },
  { name: 'Gestetner', text: /\bgestetner\b/i },
  { name: 'Lanier', text: /\blanier\b/i },
  { name: 'Savin', text: /\bsavin\b/i },
  { name: 'NRG', text: /\bnrg\b/i },
  { name: 'Fuji Xerox', text: /\bfuji\s*xerox\b/i },
  // Fuji Xerox became FUJIFILM Business Innovation (2021); enterprise 297 is theirs.
  { name: 'FUJIFILM', text: /\bfujifilm\b/i, enterprises: [297] },
  { name: 'Dell', text: /\bdell\b/i, enterprises: [674] },
  { name: 'Toshiba', text: /\btoshiba\b/i, enterprises: [1129] },
  { name: 'Zebra', text: /\bzebra\b|^ztc\s/i, enterprises: [10642] },
];

/** The rebadged brand a printer's own texts name. */
export function brandInTexts(texts: ReadonlyArray<string | undefined>): string | undefined {
  for (const b of BRANDS) if (b.text && texts.some((t) => t && b.text!.test(t))) return b.name;
  return undefined;
}

/** The brand an enterprise number alone stands for. */
export function brandOfEnterprise(enterprise: number | undefined): string | undefined {
  return BRANDS.find((b) => enterprise !== undefined && b.enterprises?.includes(enterprise))?.name;
}

/** The brand a printer's own texts name, else the one its enterprise number alone stands for. */
export function brandOf(texts: ReadonlyArray<string | undefined>, enterprise: number | undefined): string | undefined {
  return brandInTexts(texts) ?? brandOfEnterprise(enterprise);
}

// A 1284 MFG that names nobody (print-server cards and generic drivers write these).
const NOT_A_MAKER = /^(generic|unknown|none|network|printer|network printer|print server|-+)$/i;

/** The 1284 MFG field as a maker's name, or undefined when it names nobody. */
export function makerOfDeviceId(mfg: string | undefined): string | undefined {
  const t = mfg?.trim();
  return t && !NOT_A_MAKER.test(t) ? t : undefined;
}

const BRAND_PREFIX = new RegExp(
  '^(' +
    [
      'brother', 'epson', 'kyocera(\\s+mita)?', 'hp', 'hewlett[-\\s]?packard', 'canon', 'lexmark', 'ricoh', 'fuji\\s*xerox', 'fujifilm',
      'xerox', 'konica\\s*minolta', 'sharp', 'samsung', 'oki(data)?', 'dell', 'toshiba(\\s+tec)?', 'sindoh', 'pantum', 'develop', 'nrg',
      'savin', 'lanier', 'gestetner', 'utax', 'zebra', 'ztc',
    ].join('|') +
    ')\\s+',
  'i',
);
// Firmware versions: dotted groups ("LW62.DN4.P636", "1.09", "V61.17.17Z").
const FIRMWARE = /^v?[0-9a-z]+(\.[0-9a-z]+)+$/i;
// A Dell service tag: seven upper-case letters and digits, with both.
const SERVICE_TAG = /^(?=[0-9A-Z]*[0-9])(?=[0-9A-Z]*[A-Z])[0-9A-Z]{7}$/;
// Texts about the platform or an interface card, not a model.
const NOT_A_MODEL = /printing system|network printer|print server|wired ps|wireless ps|^generic\b|^printer$|^wired$|^wireless$/i;

/**
 * A model name from one source text, or undefined when the text holds none. `brand` enables the
 * brand's own rules (Dell service tags); `serial` is removed where it was appended.
 */
export function cleanModel(s: string | undefined, opts: { brand?: string; serial?: string } = {}): string | undefined {
  if (!s) return undefined;
  // Xerox-family sysDescr: "Model; ESS ..."; Ricoh-family: "Model 1.09 / Network Printer C model";
  // Lexmark-platform: "Model version NH62... kernel ...".
  let t = s.split(/;|\s\/\s/)[0].replace(/\s+(version|kernel)\s.*$/i, '').replace(/\s+/g, ' ').trim();
  for (let i = 0; i < 2; i++) {
    const stripped = t.replace(BRAND_PREFIX, '');
    if (stripped !== '') t = stripped;
  }
  t = t.replace(/\s+series$/i, '').trim();
  const words = t.split(' ');
  // Trailing noise only, and never the first word: the model stays.
  while (words.length > 1) {
    const last = words[words.length - 1];
    const noise = FIRMWARE.test(last) || last === opts.serial || (opts.brand === 'Dell' && SERVICE_TAG.test(last));
    if (!noise) break;
    words.pop();
  }
  t = words.join(' ');
  if (t === '' || NOT_A_MODEL.test(t)) return undefined;
  return t;
}
