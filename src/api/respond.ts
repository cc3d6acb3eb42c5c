// Response helpers: plain-text errors and JSON bodies, both ending in a newline (decisions.md).
import type { ServerResponse } from 'node:http';

export function sendText(res: ServerResponse, status: number, message: string): void {
  const body = message.endsWith('\n') ? message : message + '\n';
  res.statusCode = status;
  res.setHeader('Content-Type', 'text/plain; charset=utf-8');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
}

export function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value) + '\n';
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
}

/** The storage error's own message, for the contract's "<prefix>: <storage error>" bodies. */
export const errorText = (err: unknown): string => (err instanceof Error ? err.message : String(err));
