// Settings `notifications` and who gets an alert. Pure: the settings' shape, defaults
// and the per-rule choice of recipients; validation lives with the other settings (settings/settings.ts).
import type { AlertKind, AlertSeverity } from '../model/alert-rules.js';

/** One rule: alerts of these kinds and severities (empty: any) go to these recipients. */
export interface RecipientRule {
  kinds: AlertKind[];
  severities: AlertSeverity[];
  emails: string[];
  webhooks: string[];
}

export type SmtpSecurity = 'starttls' | 'tls' | 'none';

export interface NotificationSettings {
  /** The mail server; "" sends no e-mail. */
  smtp_host: string;
  smtp_port: number;
  /** starttls: STARTTLS required (587); tls: TLS from the start (465); none: plain, only without a user. */
  smtp_security: SmtpSecurity;
  /** "" signs in as nobody. */
  smtp_user: string;
  /** Secret: write-only (GET shows "" and smtp_password_set). */
  smtp_password: string;
  smtp_from: string;
  /** A CA certificate (PEM) trusted beside the system's, for the mail server and webhooks over HTTPS. */
  ca_pem: string;
  /** Accept any certificate from the mail server (a site server with a self-signed one). Off by default. */
  smtp_allow_self_signed: boolean;
  /** Secret: the HMAC-SHA256 key webhook requests are signed with (write-only). */
  webhook_secret: string;
  /** Alerts opened within this many minutes go to a recipient as one message; 0: each at once. */
  digest_minutes: number;
  recipients: RecipientRule[];
}

export const DEFAULT_NOTIFICATIONS: NotificationSettings = {
  smtp_host: '',
  smtp_port: 587,
  smtp_security: 'starttls',
  smtp_user: '',
  smtp_password: '',
  smtp_from: '',
  ca_pem: '',
  smtp_allow_self_signed: false,
  webhook_secret: '',
  digest_minutes: 5,
  recipients: [],
};

/** The e-mail addresses and webhook URLs an alert goes to (each once), by the rules it matches. */
export function recipientsOf(n: NotificationSettings, alert: { kind: string; severity: string }): { emails: string[]; webhooks: string[] } {
  const emails = new Set<string>();
  const webhooks = new Set<string>();
  for (const r of n.recipients) {
    if (r.kinds.length && !(r.kinds as string[]).includes(alert.kind)) continue;
    if (r.severities.length && !(r.severities as string[]).includes(alert.severity)) continue;
    for (const e of r.emails) emails.add(e);
    for (const w of r.webhooks) webhooks.add(w);
  }
  return { emails: [...emails], webhooks: [...webhooks] };
}

/** Every recipient any rule names (the test message's default). */
export function allRecipients(n: NotificationSettings): { emails: string[]; webhooks: string[] } {
  return { emails: [...new Set(n.recipients.flatMap((r) => r.emails))], webhooks: [...new Set(n.recipients.flatMap((r) => r.webhooks))] };
}
