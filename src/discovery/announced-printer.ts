// A printer that announced itself (mDNS, WS-Discovery, SSDP): what the listeners (mdns.ts, wsd.ts,
// ssdp.ts) report, what the announcement cache (mdns-cache.ts) keeps, and what discovery reads
// (announcements.ts, announced.ts).

export interface AnnouncedPrinter {
  /** The IPv4 address announced (A record), else the address the announcement came from. */
  address: string;
  /** The announced host name (e.g. "printer-7.local"). */
  host?: string;
  /** The DNS-SD instance name ("Lab Printer"); WS-Discovery's endpoint, SSDP's USN. */
  name: string;
  /** Service types announced at this address, e.g. ["_ipp._tcp", "_ipps._tcp"]. */
  services: string[];
  /** TXT of the announced services, keys in lower case (RFC 6763 6.4: keys are case-insensitive). */
  txt: Record<string, string>;
  /** Where IPP answers: _ipp._tcp's port, else _ipps._tcp's (TLS); none when neither was announced. */
  ipp?: { port: number; tls: boolean; resource: string };
  /** How it announced itself: mDNS (the default), WS-Discovery (wsd.ts) or SSDP (ssdp.ts). */
  method?: AnnounceMethod;
  /** What was seen, for detection_reasons (WS-Discovery and SSDP; mDNS says its service types). */
  seen?: string[];
  /** mDNS: the printer's host moved here from this address (its A record changed). */
  previousAddress?: string;
  /**
   * mDNS: every IPP service announced at the address, one per instance. A print server shares
   * several queues from one address (each its own instance, its own TXT); a printer has one.
   */
  instances?: { name: string; port: number; tls: boolean; resource: string; txt: Record<string, string> }[];
}

export type AnnounceMethod = 'mdns' | 'wsd' | 'ssdp';
