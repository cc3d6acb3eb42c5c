// A supply's part number (order code) from the text the printer describes it with: Printer-MIB
// prtMarkerSuppliesDescription, IPP printer-supply-description and marker-names. Only a code the
// text holds is taken; none is made up from a model or a colour.
//
// Rules, in order:
//   "…, PN 006R01509;SN…"  (Xerox)  the text after "PN"; "PN unknown" is none
//   anything after "S/N", "SN:" or "serial" is a serial number (Xerox's "Black Toner_S/N_:CRUM-…"),
//     never a part number: cut off first
//   otherwise the last word that looks like an order code: upper-case letters and digits (with
//     "-", "/" or "." inside), at least one letter, at least two digits, five characters or more.
//     "HP 58A CF258A" -> CF258A (58A is the marketing name, too short), "TK-8527C", "TK-1162",
//     "PK-3010S", "Black Ink Cartridge SJIC35P-BK" -> SJIC35P-BK, "Maintenance Box SJMB6000/6500"
//     -> SJMB6000/6500; "Black Toner", "Toner Cartridge 1", "Drum Cartridge (R1)" -> none.

const CODE = /^[A-Z0-9](?:[A-Z0-9./-]*[A-Z0-9])?$/;
const PLACEHOLDER = /^(unknown|none|n\/?a|-+|0+)$/i;

function looksLikeCode(word: string): boolean {
  if (word.length < 5 || word.length > 32 || !CODE.test(word)) return false;
  const digits = word.replace(/\D/g, '').length;
  return digits >= 2 && /[A-Z]/.test(word);
}

/** The part number in a supply's description, or undefined when it holds none. */
export function partNumberOf(description: string | undefined): string | undefined {
  if (!description) return undefined;
  const pn = /\bP\/?N\s*[:#]?\s*([^;,\s]+)/.exec(description);
  if (pn) return PLACEHOLDER.test(pn[1]!) || !/\d/.test(pn[1]!) ? undefined : pn[1];
  const text = description.split(/S\/N|\bSN\s*[:#]|\bserial\b/i)[0]!;
  const words = text.split(/[\s,;:()[\]]+/).filter(Boolean);
  for (let i = words.length - 1; i >= 0; i--) if (looksLikeCode(words[i]!)) return words[i];
  return undefined;
}
