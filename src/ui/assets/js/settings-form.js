// @ts-check
// The Settings page's building blocks: a field with its hint and error, a form that saves one
// section (POST /settings) and puts the agent's message under the field it names.
import { ApiError, post } from './api.js';
import { errorText, h } from './dom.js';
import { guardLeave } from './view.js';

/**
 * A field: label, control, hint and the place its error goes. `path` is the settings key the
 * agent names in its 400 (the Settings-Field header, and the start of its message:
 * "discovery.ranges_text: line 2: ..."); the error shown is the agent's plain words for it.
 * @param {string} path
 * @param {string} label
 * @param {HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement} control
 * @param {string} [hint]
 */
export function field(path, label, control, hint) {
  const id = 's-' + path.replace(/[.[\]]/g, '-');
  control.id = id;
  control.dataset.path = path;
  control.setAttribute('aria-describedby', id + '-hint ' + id + '-err');
  const isCheck = control.type === 'checkbox';
  return h('div', { class: 'field' },
    isCheck
      ? h('label', { class: 'check', for: id }, control, ' ' + label)
      : [h('label', { for: id, text: label }), control],
    h('p', { class: 'hint', id: id + '-hint', text: hint || '' }),
    h('p', { class: 'error', id: id + '-err', 'data-error-for': path }));
}

// The setting a message starts with: "discovery.ranges_text: ...", "snmp.v3[1].user ...",
// "unknown setting bogus".
const SETTING_NAMED = /^(?:unknown setting )?([a-z_]+(?:\.[a-z_0-9]+)?(?:\[\d+\](?:\.[a-z_]+)?)?)/;

/**
 * Puts the agent's message under the field it names, or under the form when it names none.
 * @param {HTMLElement} form
 * @param {string} message
 * @param {HTMLElement} formMsg
 * @param {string} [path] the field, when the caller knows it
 */
export function showError(form, message, formMsg, path) {
  const m = path ? [path, path] : message.match(SETTING_NAMED);
  /** @type {HTMLElement | null} */
  let target = null;
  if (m) {
    for (const el of form.querySelectorAll('[data-error-for]')) {
      if (el instanceof HTMLElement && el.dataset.errorFor === m[1]) target = el;
    }
  }
  if (target) {
    target.textContent = message;
    const input = form.querySelector('[data-path="' + target.dataset.errorFor + '"]');
    if (input instanceof HTMLElement) {
      input.setAttribute('aria-invalid', 'true');
      input.focus();
    }
    formMsg.textContent = 'Not saved: see the field marked above. Nothing was changed.';
  } else formMsg.textContent = 'Not saved: ' + message.replace(/\.$/, '') + '. Nothing was changed.';
  formMsg.className = 'error';
}

/** @param {HTMLElement} form @param {HTMLElement} formMsg */
export function clearErrors(form, formMsg) {
  for (const el of form.querySelectorAll('[data-error-for]')) el.textContent = '';
  for (const el of form.querySelectorAll('[aria-invalid]')) el.removeAttribute('aria-invalid');
  formMsg.textContent = '';
  formMsg.className = '';
}

/** @typedef {import('./types').PostBody<'/settings'>} SettingsUpdate */
/** @typedef {import('./types').Schemas['Settings']} Settings */

/**
 * A section that saves on its own: its fields, the part of the settings they make (`collect`,
 * which may throw to refuse before asking), and what to do with the settings saved.
 * @param {string} id
 * @param {string} title
 * @param {unknown[]} fields
 * @param {() => SettingsUpdate} collect
 * @param {(s: Settings) => void} [after]
 */
export function settingsForm(id, title, fields, collect, after) {
  const formMsg = h('p', { role: 'status', 'aria-live': 'polite', id: id + '-msg' });
  const form = h('form', { id, novalidate: true }, h('h2', { text: title }), fields,
    h('button', { type: 'submit', class: 'primary', text: 'Save', 'aria-label': 'Save the ' + title + ' settings' }),
    ' ', formMsg);
  // Edits not saved yet: the view asks before it is left with them (view.js guardLeave).
  let edited = false;
  form.addEventListener('input', () => { edited = true; });
  form.addEventListener('change', () => { edited = true; });
  guardLeave(() => (edited && form.isConnected ? 'The ' + title + ' section has changes that are not saved.' : null));
  /** @param {SettingsUpdate} body */
  const save = async (body) => {
    const s = await post('/settings', body);
    edited = false;
    formMsg.textContent = 'Saved.';
    formMsg.className = 'okmsg';
    if (after) after(s);
  };
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    clearErrors(form, formMsg);
    form.querySelector('.confirm-password')?.remove();
    let body;
    try {
      body = collect();
    } catch (err) {
      showError(form, errorText(err), formMsg);
      return;
    }
    try {
      await save(body);
    } catch (err) {
      if (err instanceof ApiError && err.status === 403 && PASSWORD_ASKED.test(err.message)) {
        formMsg.before(passwordPrompt(err.message, body, save));
        return;
      }
      // The box names the refused setting and says it in the page's words (api.js ApiError).
      if (err instanceof ApiError && err.field) showError(form, err.plain || err.message, formMsg, err.field);
      else showError(form, errorText(err), formMsg);
    }
  });
  return h('section', {}, form);
}

// The box's refusal of a change that would send a stored secret (the SMTP password, the enrollment
// token) somewhere new, when the signed-in account can prove it may know it (secret-destinations.ts
// on the agent): it asks for the account's password with the change.
const PASSWORD_ASKED = /send current_password/;

/**
 * Asks for the account's password and sends the same change again with it. The box's message says
 * which secret would go where; a wrong password is the box's answer under the box, and the change
 * can be tried again or left (Cancel: nothing was changed).
 * @param {string} message
 * @param {SettingsUpdate} body
 * @param {(body: SettingsUpdate) => Promise<void>} save
 */
function passwordPrompt(message, body, save) {
  const why = message.split(': send current_password')[0];
  const pw = h('input', { type: 'password', autocomplete: 'current-password', id: 'confirm-password-' + Math.random().toString(36).slice(2) });
  const answer = h('p', { class: 'error', role: 'alert' });
  const confirm = h('button', { type: 'button', class: 'primary', text: 'Save with my password' });
  const cancel = h('button', { type: 'button', text: 'Cancel' });
  const box = h('div', { class: 'confirm-password', role: 'group', 'aria-label': 'Confirm with your password' },
    h('p', { text: 'This change would send a stored secret to a new place (' + why + '). Enter your account password to make it, or give the secret again.' }),
    h('label', { for: pw.id, text: 'Your account password' }), pw, ' ', confirm, ' ', cancel, answer);
  confirm.addEventListener('click', async () => {
    answer.textContent = '';
    if (!(pw instanceof HTMLInputElement) || pw.value === '') {
      answer.textContent = 'Enter your account password.';
      return;
    }
    try {
      await save({ ...body, current_password: pw.value });
      box.remove();
    } catch (err) {
      answer.textContent = errorText(err);
    }
  });
  cancel.addEventListener('click', () => box.remove());
  queueMicrotask(() => pw.focus());
  return box;
}

/** The lines of a text box, trimmed, without the empty ones. @param {string} t */
export const lines = (t) => t.split('\n').map((s) => s.trim()).filter(Boolean);
/** A number box's value; NaN when empty (the agent names it). @param {HTMLInputElement} el */
export const intOf = (el) => (el.value.trim() === '' ? NaN : Number(el.value));
/** @param {string} type @param {unknown} value @param {Record<string, unknown>} [extra] */
export const inp = (type, value, extra) => h('input', Object.assign({ type, value: value ?? '' }, extra || {}));
/** @param {unknown} v */
export const chk = (v) => {
  const c = h('input', { type: 'checkbox' });
  c.checked = !!v;
  return c;
};
/** @param {string[]} values @param {string} current */
export const choice = (values, current) =>
  h('select', {}, values.map((v) => h('option', { value: v, text: v, selected: v === current })));
