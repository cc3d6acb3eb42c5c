// @ts-check
// Settings, "Accounts" (password mode, an admin only: GET /api/v1/auth/me says manage_accounts):
// who may sign in and with which role. An admin adds an account, changes its role, gives it a new
// password or removes it; the box ends that account's sessions at once, and refuses (409) a change
// that would leave it without an admin, with a message shown here as it comes.
import { get, post } from './api.js';
import { errorText, h, localTime } from './dom.js';
import { whoAmI } from './role.js';
import { field, inp } from './settings-form.js';

/** @typedef {import('./types').Schemas['Account']} Account */
/** @typedef {import('./types').Schemas['Role']} Role */

const ROLE_NAMES = { admin: 'Admin (everything)', viewer: 'Viewer (reads only)' };

/** @param {string} current */
const roleChoice = (current) =>
  h('select', {}, Object.entries(ROLE_NAMES).map(([v, text]) => h('option', { value: v, text, selected: v === current })));

/** The section, or nothing for someone who may not manage accounts. @returns {{ node: Node } | null} */
export function accountsSection() {
  if (!whoAmI().manage_accounts) return null;
  const msg = h('p', { role: 'status', 'aria-live': 'polite', id: 'accounts-msg' });
  const list = h('tbody');
  /** @param {string} text @param {boolean} ok */
  const say = (text, ok) => {
    msg.textContent = text;
    msg.className = ok ? 'okmsg' : 'error';
  };
  /** Runs an account change, says how it went and shows the accounts as they are now. @param {() => Promise<unknown>} fn @param {string} done */
  const act = async (fn, done) => {
    try {
      await fn();
      say(done, true);
    } catch (err) {
      say(errorText(err), false);
    }
    await refresh();
  };

  /** @param {Account} a */
  function row(a) {
    const me = a.username === whoAmI().user;
    const role = roleChoice(a.role);
    role.setAttribute('aria-label', 'Role of ' + a.username);
    role.addEventListener('change', () => act(() => post('/api/v1/accounts/update', { username: a.username, role: /** @type {Role} */ (role.value) }),
      a.username + ' is now ' + (role.value === 'admin' ? 'an admin' : 'a viewer') + '; their sessions were signed out.'));
    const pw = inp('password', '', { autocomplete: 'new-password', minlength: 8, 'aria-label': 'New password for ' + a.username });
    const setPw = h('button', {
      type: 'button', text: 'Set password',
      onclick: () => act(() => post('/api/v1/accounts/update', { username: a.username, password: pw.value }),
        'Password of ' + a.username + ' changed' + (me ? '.' : '; their sessions were signed out.')),
    });
    const remove = h('button', { type: 'button', class: 'danger', text: 'Remove…' });
    const cell = h('td', {}, remove);
    remove.onclick = () => cell.replaceChildren(h('span', { text: 'Remove ' + a.username + '? ' }),
      h('button', {
        type: 'button', class: 'danger', text: 'Yes, remove',
        onclick: () => act(() => post('/api/v1/accounts/delete', { username: a.username }), a.username + ' was removed.'),
      }), ' ', h('button', { type: 'button', text: 'Cancel', onclick: () => cell.replaceChildren(remove) }));
    return h('tr', { 'data-account': a.username },
      h('td', {}, h('b', { text: a.username }), me ? h('span', { class: 'muted', text: ' (you)' }) : null),
      h('td', {}, role), h('td', {}, pw, ' ', setPw),
      h('td', { class: 'muted', text: localTime(a.updated_at) }), cell);
  }
  async function refresh() {
    try {
      const { accounts } = await get('/api/v1/accounts');
      list.replaceChildren(...accounts.map(row));
    } catch (err) {
      say('Could not read the accounts: ' + errorText(err), false);
    }
  }

  const name = inp('text', '', { autocomplete: 'off', spellcheck: 'false' });
  const password = inp('password', '', { autocomplete: 'new-password', minlength: 8 });
  const role = roleChoice('viewer');
  const add = h('form', { id: 'account-add', novalidate: true }, h('h3', { text: 'Add an account' }),
    field('account.username', 'User name', name, 'Lower-case letters, digits, ".", "_" or "-"'),
    field('account.password', 'Password', password, 'At least 8 characters'),
    field('account.role', 'Role', role, 'A viewer sees everything and changes nothing.'),
    h('button', { type: 'submit', class: 'primary', text: 'Add account' }));
  add.addEventListener('submit', (e) => {
    e.preventDefault();
    const username = name.value.trim();
    void act(async () => {
      await post('/api/v1/accounts', { username, password: password.value, role: /** @type {Role} */ (role.value) });
      name.value = '';
      password.value = '';
    }, username + ' was added.');
  });
  void refresh();
  return {
    node: h('section', { id: 'accounts' }, h('h2', { text: 'Accounts' }),
      h('p', { class: 'muted', text: 'Who may sign in to this box. An admin changes anything; a viewer sees everything and changes nothing. The box keeps one admin at least.' }),
      h('div', { class: 'table-wrap' }, h('table', {},
        h('thead', {}, h('tr', {}, ['Name', 'Role', 'New password', 'Changed', ''].map((t) => h('th', { text: t })))), list)),
      msg, add),
  };
}
