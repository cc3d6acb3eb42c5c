// @ts-check
// The sign-in page's script (/login.js, a classic script: src/ui/login-page.ts): sends the form,
// sign-in or first-account setup, as JSON to the endpoint the form names, then goes to the page
// the sign-in was for, or shows the agent's answer under the button.
// The endpoint and return_to are paths on the box ("/x"); the script goes to them relative to this
// page (which is at the box's root: /login), so that sign-in also works where the box is served
// under a prefix (the central server's /api/v1/proxy/agent/<id>/).
(() => {
  const form = document.getElementById('login');
  /** @param {string} boxPath */
  const onBox = (boxPath) => '.' + boxPath;
  if (!(form instanceof HTMLFormElement)) return; // the notice: no form
  // Show password: every password field of the form at once (the setup form has two).
  const show = form.querySelector('[data-show-password]');
  const passwords = [...form.querySelectorAll('input[type=password]')];
  if (show instanceof HTMLInputElement) {
    show.addEventListener('change', () => {
      for (const p of passwords) if (p instanceof HTMLInputElement) p.type = show.checked ? 'text' : 'password';
    });
  }
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const endpoint = form.dataset.endpoint;
    const error = document.getElementById('error');
    if (!endpoint || !error) return; // both are on each form (src/ui/login-page.ts)
    // A field that repeats another (the setup form's "Password again") must match it; it is not sent.
    for (const again of form.querySelectorAll('input[data-confirms]')) {
      const first = again instanceof HTMLInputElement ? form.elements.namedItem(again.dataset.confirms || '') : null;
      if (again instanceof HTMLInputElement && first instanceof HTMLInputElement && again.value !== first.value) {
        error.textContent = 'The two passwords differ: type the same password twice.';
        again.focus();
        return;
      }
    }
    const body = Object.fromEntries(new FormData(form));
    const r = await fetch(onBox(endpoint), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (r.ok) location.href = onBox(document.body.dataset.returnTo || '/');
    else error.textContent = (await r.text()).trim();
  });
})();
