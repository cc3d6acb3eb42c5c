// PrinterInfo (contract 2.4) and PaperTray (contract 2.5), as the SNMP parsers produce them.
// Field names are the contract's lowercase names. Everything is optional except ip, last_seen
// (RFC 3339 string) and learned_oids (may be an empty object).

/** Contract 2.5. Device-reported sentinel values (-1 other, -2 unknown, -3 at least one) pass through. */
export interface PaperTray {
  index: number;
  current_level: number;
  max_capacity: number;
  name?: string;
  media_type?: string;
  /** round(current_level * 100 / max_capacity), only when both are real values (>= 0 and > 0). */
  level_percent?: number;
  status?: string;
}

/** Where the parser found things, so a collector can GET them directly next time. */
export interface LearnedOids {
  page_count_oid?: string;
  mono_pages_oid?: string;
  color_pages_oid?: string;
  cyan_oid?: string;
  magenta_oid?: string;
  yellow_oid?: string;
  toner_oid_prefix?: string;
  serial_oid?: string;
  model_oid?: string;
  vendor_specific_oids?: Record<string, string>;
}

export interface PrinterInfo {
  ip: string;
  manufacturer?: string;
  model?: string;
  serial?: string;
  admin_contact?: string;
  asset_id?: string;
  description?: string;
  location?: string;

  page_count?: number;
  total_mono_impressions?: number;
  black_impressions?: number;
  cyan_impressions?: number;
  magenta_impressions?: number;
  yellow_impressions?: number;

  toner_level_black?: number;
  toner_level_cyan?: number;
  toner_level_magenta?: number;
  toner_level_yellow?: number;
  toner_desc_black?: string;
  toner_desc_cyan?: string;
  toner_desc_magenta?: string;
  toner_desc_yellow?: string;

  mac_address?: string;
  open_ports?: number[];
  advertised_services?: string[];
  discovery_methods?: string[];
  detection_reasons?: string[];
  /** RFC 3339 date-time. */
  last_seen: string;
  mono_impressions?: number;
  color_impressions?: number;
  /**
   * Integer percentages keyed by normalised colour/kind (black, cyan, drum_black, waste_toner,
   * ...). Only supplies whose level is a real measurement are here: RFC 3805's special values
   * (-1 other, -2 unknown, -3 some remaining) and unknown capacities are left out, never 0%.
   */
  toner_levels?: Record<string, number>;
  /** Normalised colour/kind of every marker supply the printer lists, known level or not. */
  consumables?: string[];
  /**
   * The part number (order code) of each supply whose description holds one, by the same key as
   * toner_levels and consumables ({"cyan": "TK-8527C"}). Supplies without one are absent.
   */
  supply_part_numbers?: Record<string, string>;
  /**
   * Each supply's own type, by the same key as consumables: RFC 3805 PrtMarkerSuppliesTypeTC names
   * (toner, inkCartridge, wasteInk, opc ...), from prtMarkerSuppliesType or IPP marker-types. What a
   * message calls the marking agent ("ink" or "toner") comes from it (model/supply-words.ts).
   */
  supply_types?: Record<string, string>;
  /** IPP printer-supply-info-uri: the printer's page about its supplies (where to order them). */
  supply_info_uri?: string;
  status_messages?: string[];
  toner_alerts?: string[];
  dns_servers?: string[];
  firmware?: string;
  uptime_seconds?: number;
  duplex_supported?: boolean;
  paper_tray_status?: Record<string, string>;
  paper_trays?: PaperTray[];
  subnet_mask?: string;
  /** The external print server (interface card) the printer is reached through: its own name, not the printer's. */
  print_server?: { model: string; firmware?: string };
  gateway?: string;
  dhcp_server?: string;
  hostname?: string;
  web_ui_url?: string;
  meters?: Record<string, number>;
  learned_oids: LearnedOids;
  is_color?: boolean;
  is_mono?: boolean;
  is_copier?: boolean;
  is_scanner?: boolean;
  is_fax?: boolean;
  is_laser?: boolean;
  is_inkjet?: boolean;
  has_duplex?: boolean;
  form_factor?: string;
  device_type?: string;
}
