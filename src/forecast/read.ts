// A device's supply forecasts from the store: the history window a forecast fits, read narrowly
// (store/metrics.ts `supplyHistory`), then fitted (supply-forecast.ts). Served by
// GET /api/devices/forecast and sent with each device to the central server (server/uploader.ts).
import type { MetricsStore } from '../store/metrics.js';
import { forecastSupplies, type SupplyForecast } from './supply-forecast.js';

/** History a forecast fits: long enough for a slow cartridge's trend, short enough to read fast. */
export const FORECAST_DAYS = 90;
const DAY = 86_400_000;

export function readForecast(metrics: MetricsStore, serial: string, now: number): { supplies: SupplyForecast[] } {
  return { supplies: forecastSupplies(metrics.supplyHistory(serial, now - FORECAST_DAYS * DAY, now, now), now) };
}
