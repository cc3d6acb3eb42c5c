// Entry point other modules import: parsePrinter and the read planner.
export { parsePrinter, readPlan, cleanSerial, cleanModel, formatMac, type ParsedPrinter, type ParsedMetrics } from './index.js';
