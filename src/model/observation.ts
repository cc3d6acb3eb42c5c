// What one read of a network printer learned (an SNMP read, an IPP answer, an announcement), in
// the contract's field names: discovery folds it into the printer's record (discovery/merge.ts).
import type { Device } from './device.js';

/** What discovery learned about one printer, already in contract field names. */
export interface Observation {
  serial: string;
  ip: string;
  now: number;
  scanId?: number;
  fields: Partial<Pick<Device, 'manufacturer' | 'model' | 'hostname' | 'firmware' | 'mac_address' | 'subnet_mask' | 'gateway' | 'location' | 'description' | 'web_ui_url' | 'consumables' | 'status_messages' | 'dns_servers' | 'dhcp_server'>>;
  printerInfo: Record<string, unknown>;
  /** How a scan came to this address (subnet scan, manual range); none for a poll. */
  discoveryMethods?: string[];
  /** The protocol the record was read by: 'snmp' (the default) or 'ipp' (ipp/observation.ts). */
  source?: 'snmp' | 'ipp';
  /** True when a scan's port probe ran on this address: its open_ports replace the record's. */
  portsProbed?: boolean;
}
