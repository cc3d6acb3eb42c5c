// The sign-in page at /login: a password login form, the first-account setup form (password mode
// while no account exists), or a notice where this box has no password login. Its script is
// /login.js, so the page runs under the same no-inline-script policy as the UI.
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

// The endpoint and return_to are paths on the box ("/x"); the script goes to them relative to this
// page (which is at the box's root: /login), so that sign-in also works where the box is served
// under a prefix (the central server's /api/v1/proxy/agent/<id>/).
export const LOGIN_JS = `const form = document.getElementById('login');
const onBox = (boxPath) => '.' + boxPath;
if (form) form.addEventListener('submit', async (e) => {
  e.preventDefault();
  const body = Object.fromEntries(new FormData(form));
  const r = await fetch(onBox(form.dataset.endpoint), { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  if (r.ok) location.href = onBox(document.body.dataset.returnTo || '/');
  else document.getElementById('error').textContent = (await r.text()).trim();
});
`;
