// A printer's page served under /proxy/{serial}/: what the reference agent rewrites so that the
// page works under that prefix (and so that the central server, which swaps the agent's prefix
// /proxy/{serial} for its own, finds it): root-absolute links, CSS url(), simple script redirects,
// a <base> for relative links and Location (its cookies: cookie-jar.ts). Pure string work, no I/O.

/** Content types whose text is rewritten (the reference's list). */
export function rewritable(contentType: string | undefined): 'html' | 'css' | 'js' | undefined {
  const t = (contentType ?? '').toLowerCase();
  if (t.includes('text/html')) return 'html';
  if (t.includes('text/css')) return 'css';
  if (t.includes('javascript')) return 'js';
  return undefined;
}

const ATTRIBUTES = ['href', 'src', 'action', 'data-src', 'data-href'];

/**
 * The body's text with the printer's own links kept under `prefix` (`/proxy/SERIAL`).
 * `origin` is the printer's (`http://10.0.0.5`): absolute links to it become prefixed paths.
 * `upstreamPath` is the path fetched from the printer, for the <base> of an HTML page.
 */
export function rewriteBody(text: string, kind: 'html' | 'css' | 'js', prefix: string, origin: string, upstreamPath: string): string {
  let out = text;
  // Absolute links to the printer itself (its pages often name their own address).
  for (const o of originForms(origin)) out = out.split(o + '/').join(prefix + '/').split(o + '"').join(prefix + '/"').split(o + "'").join(prefix + "/'");
  for (const a of ATTRIBUTES) {
    for (const q of ['"', "'"]) out = replaceRootAbsolute(out, `${a}=${q}`, prefix);
  }
  if (kind !== 'js') {
    for (const open of ['url(', 'url("', "url('"]) out = replaceRootAbsolute(out, open, prefix);
  }
  for (const lhs of ['location.href=', 'window.location=']) {
    for (const q of ['"', "'"]) out = out.split(`${lhs}${q}/${q}`).join(`${lhs}${q}${prefix}/${q}`);
  }
  if (kind === 'html' && !/<base[\s>]/i.test(out)) out = insertBase(out, prefix + directoryOf(upstreamPath));
  return out;
}

/** `open` followed by `/` becomes `open` + prefix + `/`, once per occurrence (never twice). */
function replaceRootAbsolute(text: string, open: string, prefix: string): string {
  const parts = text.split(open + '/');
  if (parts.length === 1) return text;
  let out = parts[0];
  for (let i = 1; i < parts.length; i++) {
    // Already under the prefix (a page that names it, or a second pass): leave it.
    const rest = parts[i];
    out += rest.startsWith(prefix.slice(1) + '/') ? open + '/' + rest : open + prefix + '/' + rest;
  }
  return out;
}

function originForms(origin: string): string[] {
  const u = new URL(origin);
  const forms = [origin];
  // A printer names itself with or without its default port.
  if (!u.port) forms.push(`${u.protocol}//${u.hostname}:${u.protocol === 'https:' ? 443 : 80}`);
  return forms;
}

function directoryOf(path: string): string {
  const p = path.split('?')[0];
  return p.endsWith('/') ? p : p.slice(0, p.lastIndexOf('/') + 1) || '/';
}

function insertBase(html: string, href: string): string {
  const tag = `<base href="${href.replace(/"/g, '&quot;')}">`;
  const m = /<head(\s[^>]*)?>/i.exec(html);
  if (!m) return html;
  const at = m.index + m[0].length;
  return html.slice(0, at) + tag + html.slice(at);
}

/**
 * A Location from the printer, kept under the prefix when it points at the printer itself
 * (relative, or absolute with the printer's own host); another host's URL is left alone.
 */
export function rewriteLocation(location: string, prefix: string, origin: string, upstreamPath: string): string {
  let u: URL;
  try {
    u = new URL(location, origin + upstreamPath);
  } catch {
    return location;
  }
  const base = new URL(origin);
  if (u.host !== base.host && u.hostname !== base.hostname) return location;
  return prefix + u.pathname + u.search + u.hash;
}
