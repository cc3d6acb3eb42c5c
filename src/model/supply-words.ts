// What a supply is called in words a person reads ("Cyan ink", "Black toner", "Waste ink box"):
// the marking agent comes from the supply's own type (PrinterInfo `supply_types`: Printer-MIB
// prtMarkerSuppliesType, IPP marker-types), so an inkjet never says "toner". Pure.
import type { PrinterInfo } from './printer-info.js';

export type MarkingAgent = 'ink' | 'toner' | 'wax' | 'ribbon';

export type AgentFacts = Pick<PrinterInfo, 'supply_types' | 'is_inkjet' | 'is_laser'>;

/** The agent a PrtMarkerSuppliesTypeTC name marks with (wasteInk: ink), or undefined (opc, fuser ...). */
export function agentOfType(type: string | undefined): MarkingAgent | undefined {
  if (!type) return undefined;
  if (/ribbon/i.test(type)) return 'ribbon';
  if (/wax/i.test(type)) return 'wax';
  if (/ink/i.test(type)) return 'ink';
  if (/toner/i.test(type)) return 'toner';
  return undefined;
}

/**
 * What the printer marks with: the one agent its supplies' types name; when they name none (or
 * several), its marking technology (prtMarkerMarkTech: is_inkjet / is_laser); else undefined.
 */
export function printerAgent(info: AgentFacts | undefined): MarkingAgent | undefined {
  const agents = new Set(Object.values(info?.supply_types ?? {}).map(agentOfType).filter((a) => a !== undefined));
  if (agents.size === 1) return [...agents][0];
  if (info?.is_inkjet) return 'ink';
  if (info?.is_laser) return 'toner';
  return undefined;
}

/** The agent of one supply: its own type first, else the printer's. */
export function supplyAgent(info: AgentFacts | undefined, key: string): MarkingAgent | undefined {
  const own = info?.supply_types && Object.hasOwn(info.supply_types, key) ? info.supply_types[key] : undefined;
  return agentOfType(own) ?? printerAgent(info);
}

// Supply keys (snmp/parse/supplies.ts supplyKey) that are the marking agent itself, by colour.
const COLOURANTS = new Set([
  'black', 'cyan', 'magenta', 'yellow', 'photo_black', 'matte_black', 'light_gray', 'gray', 'light_cyan', 'light_magenta',
  'photo', 'tri_color', 'red', 'green', 'blue', 'orange', 'violet', 'white', 'clear', 'ink', 'toner',
]);

/** Whether a supply key names a colourant (toner, ink), not a part (drum, fuser, waste box). */
export const isColourant = (key: string) => COLOURANTS.has(key);

const capital = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
const spaced = (key: string) => key.replace(/_/g, ' ').replace(/\btri color\b/, 'tri-colour').replace(/\bgray\b/, 'grey');

/**
 * A supply's name: "Cyan ink", "Black toner", "Cyan cartridge" (agent not known), "Waste ink box",
 * "Drum black", "Fuser". `key` is the reading's supply key.
 */
export function supplyName(info: AgentFacts | undefined, key: string): string {
  if (key === 'ink' || key === 'toner') return capital(key);
  if (isColourant(key)) {
    const agent = supplyAgent(info, key);
    return `${capital(spaced(key))} ${agent ?? 'cartridge'}`;
  }
  if (key === 'waste_ink') return 'Waste ink box';
  if (key === 'waste_toner') return 'Waste toner container';
  return capital(spaced(key));
}

/**
 * Status lines with hrPrinterDetectedErrorState's bit names (snmp/parse/status.ts "Low toner",
 * "No toner": the MIB names them so whatever the printer marks with) said with the printer's
 * agent; a printer's own words are left as they are. The low bit is the summary of what the
 * printer's alert table says supply by supply: when one of its own lines already says the agent is
 * low ("Ink is low.", "Toner Low: Black"), the bit is not said a second time.
 */
export function agentWordsIn(lines: string[], agent: MarkingAgent | undefined): string[] {
  const word = agent ?? 'toner';
  const low = `Low ${word}`;
  const said = lines.map((m) => (m === 'Low toner' ? low : m === 'No toner' ? `No ${word}` : m));
  const saysLow = new RegExp(`\\b${word}\\b.*\\b(low|almost empty|nearly empty)\\b|\\blow\\b.*\\b${word}\\b`, 'i');
  return said.some((m) => m !== low && saysLow.test(m)) ? said.filter((m) => m !== low) : said;
}
