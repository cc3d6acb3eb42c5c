// The sign-in page at /login: a password login form, the first-account setup form (password mode
// while no account exists), or a notice where this box has no password login. Its script is
// /login.js, so the page runs under the same no-inline-script policy as the UI.
import { existsSync, readFileSync } from 'node:fs';

export type LoginView = 'login' | 'setup' | 'notice';

const escapeHtml = (s: string): string =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

const FORMS: Record<LoginView, string> = {
  login: `<form id="login" data-endpoint="/api/v1/auth/login">
<label>User <input name="username" autocomplete="username" autocapitalize="none" required></label>
<label>Password <input name="password" type="password" autocomplete="current-password" required></label>
<button>Sign in</button><p id="error" role="alert"></p></form>`,
  setup: `<p>No account exists on this box yet. Enter the setup code shown on the box's screen (or in
<code>printbox-setup.txt</code> on its memory card) and choose the administrator's name and password.</p>
<form id="login" data-endpoint="/api/v1/auth/setup">
<label>Setup code <input name="setup_code" autocomplete="one-time-code" autocapitalize="characters" required></label>
<label>User <input name="username" autocomplete="username" autocapitalize="none" value="admin" required></label>
<label>Password <input name="password" type="password" autocomplete="new-password" minlength="8" required></label>
<button>Create account</button><p id="error" role="alert"></p></form>`,
  notice: `<p>This box has no password login in its auth mode: open it from the box itself or through the central server.</p>`,
};

export function loginPage(view: LoginView, returnTo: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>PrintBox sign-in</title>
<link rel="icon" href="favicon.ico" type="image/svg+xml">
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font:15px/1.4 system-ui,sans-serif;max-width:24rem;margin:3rem auto;padding:0 1rem;color:#1d2733}
label{display:block;margin:.6rem 0}input{display:block;box-sizing:border-box;width:100%;font:inherit;padding:.3rem}#error{color:#b00020}</style>
</head><body data-return-to="${escapeHtml(returnTo)}"><main><h1>PrintBox</h1>
${FORMS[view]}
</main><script src="login.js"></script></body></html>
`;
}

// The page's script: src/ui/assets/login.js, checked by tsc with the UI's modules
// (src/ui/assets/tsconfig.json) and copied beside this module by scripts/build.mjs (the sources
// when run from a tsc-only build).
function loginScript(): string {
  for (const c of ['./assets/login.js', '../../../src/ui/assets/login.js']) {
    const u = new URL(c, import.meta.url);
    if (existsSync(u)) return readFileSync(u, 'utf8');
  }
  throw new Error('web UI asset login.js is missing: run npm run build');
}
export const LOGIN_JS = loginScript();
