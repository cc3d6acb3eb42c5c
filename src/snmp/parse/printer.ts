// Entry point other modules import: parsePrinter, the read planner and the printer evidence.
export { parsePrinter, readPlan, cleanSerial, cleanModel, formatMac, type ParsedPrinter, type ParsedMetrics } from './index.js';
export { printerEvidence, type PrinterEvidence } from './evidence.js';
