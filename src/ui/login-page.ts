// The sign-in page at /login: a password login form, the first-account setup form (password mode
// while no account exists), or a notice where this box has no password login. Its script is
// /login.js, so the page runs under the same no-inline-script policy as the UI.
import { existsSync, readFileSync } from 'node:fs';

export type LoginView = 'login' | 'setup' | 'notice';

const escapeHtml = (s: string): string =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

// "Show password" is a checkbox without a name: it never goes into the request (login.js sends
// the form's named fields). The setup form's second password is checked by the page (a mismatch
// is said there, nothing is sent) and left out of the request too.
const SHOW = `<label class="check"><input type="checkbox" data-show-password> Show password</label>`;

const FORMS: Record<LoginView, string> = {
  login: `<form id="login" data-endpoint="/api/v1/auth/login">
<label>User <input name="username" autocomplete="username" autocapitalize="none" required></label>
<label>Password <input name="password" type="password" autocomplete="current-password" required></label>
${SHOW}
<button class="primary">Sign in</button><p id="error" role="alert"></p></form>`,
  setup: `<p>No account exists on this box yet. Enter the setup code shown on the box's screen (or in
<code>printbox-setup.txt</code> on its memory card) and choose the administrator's name and password.</p>
<form id="login" data-endpoint="/api/v1/auth/setup">
<label>Setup code <input name="setup_code" autocomplete="one-time-code" autocapitalize="characters" required></label>
<label>User <input name="username" autocomplete="username" autocapitalize="none" value="admin" required></label>
<label>Password (8 characters at least) <input name="password" type="password" autocomplete="new-password" minlength="8" required></label>
<label>Password again <input data-confirms="password" type="password" autocomplete="new-password" minlength="8" required></label>
${SHOW}
<button class="primary">Create account</button><p id="error" role="alert"></p></form>`,
  notice: `<p>This box has no password login in its auth mode: open it from the box itself or through the central server.</p>`,
};

// The UI's colours (app.css), inline: the page is shown before sign-in, when the UI's own files
// are not served. Fields and the button are 44 px high (a finger's target on a phone).
const STYLE = `:root{--ink:#1d2733;--muted:#4f5b67;--line:#d5dbe1;--bg:#f4f6f8;--accent:#1f5fbf;--bad:#a61b0f}
body{font:16px/1.45 system-ui,sans-serif;margin:0;color:var(--ink);background:var(--bg)}
main{box-sizing:border-box;max-width:24rem;margin:3rem auto;padding:1.5rem;background:#fff;border:1px solid var(--line);border-radius:8px}
h1{margin:0 0 1rem;font-size:1.4rem}label{display:block;margin:.8rem 0}
input{display:block;box-sizing:border-box;width:100%;min-height:44px;margin-top:.25rem;font:inherit;padding:.4rem .6rem;border:1px solid var(--muted);border-radius:4px}
label.check{display:flex;align-items:center;gap:.5rem;min-height:44px;margin:.4rem 0}
label.check input{width:1.25rem;height:1.25rem;min-height:0;margin:0}
button{font:inherit;min-height:44px;width:100%;margin-top:.6rem;border:1px solid var(--accent);border-radius:4px;background:var(--accent);color:#fff;cursor:pointer}
button:focus-visible,input:focus-visible{outline:3px solid #9cc0f5;outline-offset:1px}
#error{color:var(--bad);min-height:1.4em}code{font-size:.95em}
@media (max-width:26rem){main{margin:0;border:0;border-radius:0;min-height:100vh}}`;

export function loginPage(view: LoginView, returnTo: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>PrintBox sign-in</title>
<link rel="icon" href="favicon.ico" type="image/svg+xml">
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>${STYLE}</style>
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
