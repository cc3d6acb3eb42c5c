// Which box speaks in an alert, and where its UI shows a printer. The box's name is its host name:
// the one name a technician meets everywhere (the setup sheet's https://<name>.local:8443/, the
// TLS certificate's names, the agent name registered with the central server); provisioning sets
// it. The link is built on `<name>.local` (mDNS), which the certificate names, so that it opens
// without a name warning wherever the box is found by name; the address is said beside it for a
// network where .local does not resolve.
import { hostname, networkInterfaces } from 'node:os';

export interface BoxIdentity {
  /** The host name, "printbox-1a2b". */
  name: string;
  /** The first non-internal IPv4 address, "" when it has none. */
  address: string;
  /** The printer's page in the box's UI, or null when the box has no name. */
  pageUrl(serial: string): string | null;
}

export function boxIdentity(httpsPort: number, name = hostname(), address = firstAddress()): BoxIdentity {
  // A name with a dot is already one a resolver knows (a DHCP-registered FQDN): kept as it is.
  const host = name.includes('.') ? name : `${name}.local`;
  const port = httpsPort === 443 ? '' : `:${httpsPort}`;
  return {
    name,
    address,
    pageUrl: (serial) => (name ? `https://${host}${port}/#/printer/${encodeURIComponent(serial)}` : null),
  };
}

function firstAddress(): string {
  try {
    for (const list of Object.values(networkInterfaces())) for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  } catch {
    // No interfaces readable (a container without /proc/net): the name alone.
  }
  return '';
}
