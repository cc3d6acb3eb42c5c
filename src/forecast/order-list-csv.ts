// The order list as a CSV file's columns and rows: one layout for the download
// (GET /api/supplies/order-list?format=csv) and the weekly e-mail's attachment (notify/order-list-mail.ts).
import type { OrderItem } from './order-list.js';
import { fileDate, type Cell } from '../shared/csv-file.js';

export const CSV_HEADER = ['expected_empty_on', 'days_to_empty', 'level_percent', 'supply', 'part_number', 'serial', 'manufacturer', 'model', 'location', 'asset_number', 'reasons'];

export const csvRow = (i: OrderItem): Cell[] => [
  i.expected_empty_on, i.days_to_empty, i.level, i.supply, i.part_number, i.serial, i.manufacturer, i.model, i.location, i.asset_number, i.reasons.join(' '),
];

/** The order list's file name on `ms`'s UTC day (the download's and the weekly e-mail's attachment). */
export const orderListFileName = (ms: number) => `order-list-${fileDate(ms)}.csv`;
