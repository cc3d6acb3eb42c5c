// The pm_agent_session cookie (contract 5.2): Path=/, HttpOnly, SameSite=Lax, Expires and Max-Age;
// Secure when the request came over HTTPS (TLS here, or a trusted proxy's X-Forwarded-Proto).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { serialize } from '@tinyhttp/cookie';
import { SESSION_COOKIE, type Session, type SessionStore } from './sessions.js';
import type { RequestFacts } from './request-facts.js';

const identity = (s: string) => s; // tokens are base64url: nothing to encode

/** Makes a session for `user` and sets its cookie; returns the session. */
export function startSession(
  req: IncomingMessage,
  res: ServerResponse,
  deps: { sessions: SessionStore; facts: RequestFacts; now(): number },
  user: string,
  expires?: number,
): Session {
  const now = deps.now();
  const { token, session } = deps.sessions.create(user, expires);
  res.setHeader(
    'Set-Cookie',
    serialize(SESSION_COOKIE, token, {
      encode: identity,
      path: '/',
      expires: new Date(session.expires),
      maxAge: Math.max(0, Math.floor((session.expires - now) / 1000)),
      httpOnly: true,
      sameSite: 'Lax',
      secure: deps.facts.isHttps(req),
    }),
  );
  return session;
}

/** Tells the browser to forget its session cookie. */
export function clearSessionCookie(req: IncomingMessage, res: ServerResponse, facts: RequestFacts): void {
  res.setHeader(
    'Set-Cookie',
    serialize(SESSION_COOKIE, '', {
      encode: identity,
      path: '/',
      expires: new Date(0),
      maxAge: 0,
      httpOnly: true,
      sameSite: 'Lax',
      secure: facts.isHttps(req),
    }),
  );
}
