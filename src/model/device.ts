// The device record (contract 2.2) as the agent holds it: times as epoch ms.
import type { TrustState } from './trust.js';

export interface LockedField {
  field: string;
  reason?: string;
  locked_at: string;
  locked_by?: string;
}

/**
 * The record's types. Its list of fields is DEVICE_RECORD (device-fields.ts), which stores, serves,
 * uploads and backs up each one: the build fails while the two differ.
 */
export interface Device {
  serial: string;
  ip: string;
  manufacturer?: string;
  model?: string;
  hostname?: string;
  firmware?: string;
  mac_address?: string;
  subnet_mask?: string;
  gateway?: string;
  consumables?: string[];
  status_messages?: string[];
  last_seen: number;
  created_at: number;
  first_seen: number;
  discovery_method?: string;
  asset_number?: string;
  location?: string;
  description?: string;
  web_ui_url?: string;
  raw_data?: Record<string, unknown>;
  device_type: string;
  source_type: string;
  port_name?: string;
  driver_name?: string;
  spooler_status?: string;
  is_usb: boolean;
  is_default: boolean;
  is_shared: boolean;
  usb_webui_available: boolean;
  initial_page_count?: number;
  dns_servers?: string[];
  dhcp_server?: string;
  is_saved: boolean;
  visible: boolean;
  walk_filename?: string;
  last_scan_id?: number;
  locked_fields?: LockedField[];
  /**
   * Whether to believe the printer's readings (model/trust.ts): a pending move, a flagged counter,
   * the identity trusted readings showed. Not a field of the contract's Device: shown in raw_data.
   */
  trust?: TrustState;
  /** Last PrinterInfo read from the device (contract 2.4), as served. */
  printer_info?: Record<string, unknown>;
}

/** A metrics row (contract 2.3) as the agent holds it: `ts` in epoch ms. */
export interface Snapshot {
  id: number;
  serial: string;
  ts: number;
  page_count?: number;
  color_pages?: number;
  mono_pages?: number;
  scan_count?: number;
  toner_levels?: Record<string, unknown>;
  /**
   * The category counters (fax_pages, copy_pages, print_pages, ...; METRICS_EXTRA_COUNTERS): only
   * those the printer reported, served beside the others and kept by every tier (max of the bucket).
   */
  extra?: Record<string, number>;
  tier?: Tier;
}

export const TIERS = ['raw', 'hourly', 'daily', 'monthly'] as const;
export type Tier = (typeof TIERS)[number];
