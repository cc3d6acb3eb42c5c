// OIDs the agent reads from printers: MIB-II, HOST-RESOURCES-MIB (RFC 2790), Printer-MIB
// (RFC 3805) and the PWG Printer Port Monitor MIB (IEEE 1284 device ID). Vendor OIDs live in
// src/snmp/vendors/*.ts; readPlan() there adds them once the vendor is known.
// All OIDs are numeric, without a leading dot.

// --- MIB-II system group
export const SYS_DESCR = '1.3.6.1.2.1.1.1.0';
export const SYS_OBJECT_ID = '1.3.6.1.2.1.1.2.0';
export const SYS_UPTIME = '1.3.6.1.2.1.1.3.0';
export const SYS_CONTACT = '1.3.6.1.2.1.1.4.0';
export const SYS_NAME = '1.3.6.1.2.1.1.5.0';
export const SYS_LOCATION = '1.3.6.1.2.1.1.6.0';

// --- MIB-II interfaces / ip
export const IF_TYPE = '1.3.6.1.2.1.2.2.1.3';
export const IF_PHYS_ADDRESS = '1.3.6.1.2.1.2.2.1.6';
export const IP_AD_ENT_IF_INDEX = '1.3.6.1.2.1.4.20.1.2';
export const IP_AD_ENT_NETMASK = '1.3.6.1.2.1.4.20.1.3';
/** ipRouteNextHop for the default route 0.0.0.0 (a single GET, no route-table walk). */
export const IP_ROUTE_NEXT_HOP_DEFAULT = '1.3.6.1.2.1.4.21.1.7.0.0.0.0';

// --- HOST-RESOURCES-MIB
export const HR_DEVICE_TABLE = '1.3.6.1.2.1.25.3.2.1';
export const HR_DEVICE_TYPE = '1.3.6.1.2.1.25.3.2.1.2';
export const HR_DEVICE_DESCR = '1.3.6.1.2.1.25.3.2.1.3';
export const HR_DEVICE_STATUS = '1.3.6.1.2.1.25.3.2.1.5';
export const HR_PRINTER_TABLE = '1.3.6.1.2.1.25.3.5.1';
export const HR_PRINTER_STATUS = '1.3.6.1.2.1.25.3.5.1.1';
export const HR_PRINTER_DETECTED_ERROR_STATE = '1.3.6.1.2.1.25.3.5.1.2';
/** hrDeviceType value for printers (HOST-RESOURCES-TYPES hrDevicePrinter). */
export const HR_DEVICE_PRINTER = '1.3.6.1.2.1.25.3.1.5';

// --- Printer-MIB (RFC 3805), prefix 1.3.6.1.2.1.43
export const PRT_GENERAL_TABLE = '1.3.6.1.2.1.43.5.1.1';
/** prtCoverTable: each cover or interlock's description (.2) and status (.3). */
export const PRT_COVER_TABLE = '1.3.6.1.2.1.43.6.1.1';
export const PRT_GENERAL_PRINTER_NAME = '1.3.6.1.2.1.43.5.1.1.16';
export const PRT_GENERAL_SERIAL_NUMBER = '1.3.6.1.2.1.43.5.1.1.17';
export const PRT_LOCALIZATION_CHARSET = '1.3.6.1.2.1.43.7.1.1.4';
export const PRT_INPUT_TABLE = '1.3.6.1.2.1.43.8.2.1';
export const PRT_MARKER_TABLE = '1.3.6.1.2.1.43.10.2.1';
export const PRT_MARKER_MARK_TECH = '1.3.6.1.2.1.43.10.2.1.2';
export const PRT_MARKER_COUNTER_UNIT = '1.3.6.1.2.1.43.10.2.1.3';
export const PRT_MARKER_LIFE_COUNT = '1.3.6.1.2.1.43.10.2.1.4';
export const PRT_MARKER_PROCESS_COLORANTS = '1.3.6.1.2.1.43.10.2.1.6';
export const PRT_MARKER_SUPPLIES_TABLE = '1.3.6.1.2.1.43.11.1.1';
export const PRT_MARKER_SUPPLIES_COLORANT_INDEX = '1.3.6.1.2.1.43.11.1.1.3';
export const PRT_MARKER_SUPPLIES_CLASS = '1.3.6.1.2.1.43.11.1.1.4';
export const PRT_MARKER_SUPPLIES_TYPE = '1.3.6.1.2.1.43.11.1.1.5';
export const PRT_MARKER_SUPPLIES_DESCRIPTION = '1.3.6.1.2.1.43.11.1.1.6';
export const PRT_MARKER_SUPPLIES_UNIT = '1.3.6.1.2.1.43.11.1.1.7';
export const PRT_MARKER_SUPPLIES_MAX_CAPACITY = '1.3.6.1.2.1.43.11.1.1.8';
export const PRT_MARKER_SUPPLIES_LEVEL = '1.3.6.1.2.1.43.11.1.1.9';
export const PRT_MARKER_COLORANT_TABLE = '1.3.6.1.2.1.43.12.1.1';
export const PRT_MARKER_COLORANT_VALUE = '1.3.6.1.2.1.43.12.1.1.4';
export const PRT_MEDIA_PATH_TYPE = '1.3.6.1.2.1.43.13.4.1.9';
export const PRT_CONSOLE_DISPLAY_BUFFER_TEXT = '1.3.6.1.2.1.43.16.5.1.2';
export const PRT_ALERT_TABLE = '1.3.6.1.2.1.43.18.1.1';

// --- PWG Printer Port Monitor MIB (ppmPrinterTable), IEEE 1284 device ID of printer 1
export const PPM_PRINTER_TABLE = '1.3.6.1.4.1.2699.1.2.1.2.1.1';
export const PPM_PRINTER_NAME = '1.3.6.1.4.1.2699.1.2.1.2.1.1.2';
export const PPM_PRINTER_IEEE1284_DEVICE_ID = '1.3.6.1.4.1.2699.1.2.1.2.1.1.3';

/**
 * Vendor OIDs that carry the same IEEE 1284 device ID string, for printers without the PWG MIB:
 * HP and Brother (…9.1.1.7.0, HP's gdStatusId layout, which Brother mirrors), Epson, Kyocera.
 */
export const VENDOR_DEVICE_ID_OIDS: readonly string[] = [
  '1.3.6.1.4.1.11.2.3.9.1.1.7.0',
  '1.3.6.1.4.1.2435.2.3.9.1.1.7.0',
  '1.3.6.1.4.1.1248.1.2.2.1.1.1.1.1',
  '1.3.6.1.4.1.1347.40.1.1.1.8.1',
];

/**
 * Scalar GETs for a quick identify: one request, a dozen varbinds. Enough for manufacturer,
 * model, serial, hostname and a page count.
 */
export const IDENTITY_GET_OIDS: readonly string[] = [
  SYS_DESCR,
  SYS_OBJECT_ID,
  SYS_UPTIME,
  SYS_CONTACT,
  SYS_NAME,
  SYS_LOCATION,
  `${HR_DEVICE_DESCR}.1`,
  `${PRT_GENERAL_SERIAL_NUMBER}.1`,
  `${PRT_GENERAL_PRINTER_NAME}.1`,
  `${PPM_PRINTER_IEEE1284_DEVICE_ID}.1`,
  `${PRT_MARKER_LIFE_COUNT}.1.1`,
  `${HR_PRINTER_STATUS}.1`,
  ...VENDOR_DEVICE_ID_OIDS,
];

/** Scalar GETs a full read adds to the identity GETs (vendor GETs come from readPlan()). */
export const READ_GET_OIDS: readonly string[] = [IP_ROUTE_NEXT_HOP_DEFAULT];

/**
 * Subtrees to walk for a full read: Printer-MIB and HOST-RESOURCES tables that describe the
 * printer, and the few MIB-II columns that give MAC and netmask. Each is a table or a single
 * column, tens of OIDs on a typical printer; nothing here walks all of MIB-2.
 */
export const WALK_ROOTS: readonly string[] = [
  PRT_GENERAL_TABLE,
  PRT_COVER_TABLE,
  PRT_LOCALIZATION_CHARSET,
  PRT_INPUT_TABLE,
  PRT_MARKER_TABLE,
  PRT_MARKER_SUPPLIES_TABLE,
  PRT_MARKER_COLORANT_TABLE,
  PRT_MEDIA_PATH_TYPE,
  PRT_CONSOLE_DISPLAY_BUFFER_TEXT,
  PRT_ALERT_TABLE,
  HR_DEVICE_TABLE,
  HR_PRINTER_TABLE,
  IF_TYPE,
  IF_PHYS_ADDRESS,
  IP_AD_ENT_IF_INDEX,
  IP_AD_ENT_NETMASK,
  PPM_PRINTER_TABLE,
];
