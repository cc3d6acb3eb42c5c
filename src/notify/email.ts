// E-mail over SMTP with nodemailer: STARTTLS required (`starttls`) or TLS from the start (`tls`),
// with authentication when a user is set; certificates verified against the system's CAs and
// `ca_pem`, unless `smtp_allow_self_signed` says otherwise. One connection per message: alerts are
// few, and a message never waits on a pooled connection a dead server left half open.
import nodemailer from 'nodemailer';
import { trustedCas } from '../net/ca-pem.js';
import type { NotificationSettings } from '../settings/notifications.js';
import { tlsInWords } from '../net/tls-words.js';

/** What a mail server's certificate failure tells a person to do. */
export const MAIL_CA_FIX = 'upload its CA certificate in Settings → Notifications (Trusted CA certificate)';

/** Each step's deadline: connecting, the greeting, and silence on the socket. */
const TIMEOUT_MS = 15_000;

export interface Attachment {
  filename: string;
  contentType: string;
  content: string;
}

export interface Mail {
  to: string;
  subject: string;
  text: string;
  /** Files made by the box (the order list's CSV), never read from a path or URL. */
  attachments?: Attachment[];
}

/** Sends one message; rejects with the server's or the network's reason. */
export async function sendEmail(n: NotificationSettings, mail: Mail): Promise<void> {
  const transport = nodemailer.createTransport(
    {
      host: n.smtp_host,
      port: n.smtp_port,
      secure: n.smtp_security === 'tls',
      requireTLS: n.smtp_security === 'starttls',
      ignoreTLS: n.smtp_security === 'none',
      auth: n.smtp_user ? { user: n.smtp_user, pass: n.smtp_password } : undefined,
      tls: {
        // The system's CAs and the site's own, when given (a private CA for a site mail server).
        ca: trustedCas(n.ca_pem),
        rejectUnauthorized: !n.smtp_allow_self_signed,
        minVersion: 'TLSv1.2',
      },
      connectionTimeout: TIMEOUT_MS,
      greetingTimeout: TIMEOUT_MS,
      socketTimeout: TIMEOUT_MS,
    },
    // The message is ours, but nothing in it may make nodemailer read a file or fetch a URL.
    { disableFileAccess: true, disableUrlAccess: true },
  );
  try {
    await transport.sendMail({ from: n.smtp_from, to: mail.to, subject: mail.subject, text: mail.text, attachments: mail.attachments });
  } catch (err) {
    throw tlsInWords(err, 'the mail server', `${n.smtp_host}:${n.smtp_port}`, MAIL_CA_FIX) ?? err;
  } finally {
    transport.close();
  }
}
