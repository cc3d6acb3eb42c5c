// @ts-check
// The Updates section of Settings (A/B slots, RAUC): where updates come from, what runs, what is
// offered; check and install (docs/updates.md).
import { get, post } from './api.js';
import { ago, errorText, h } from './dom.js';
import { field, inp, settingsForm } from './settings-form.js';

/** @typedef {import('./types').Schemas} S */

const INSTALL_QUESTION = 'Install the update and restart the box? It serves again on the new version in a minute or '
  + 'two; if that version does not start, the box goes back to this one.';

/** @param {S['Settings']} s @returns {import('./settings.js').Section} */
export function updatesSection(s) {
  const updUrl = inp('url', s.update.url, { placeholder: 'https://updates.example/printbox/manifest.json' });
  const updSource = settingsForm('settings-update', 'Updates', [field('update.url', 'Update manifest URL', updUrl,
    'Empty: ask the central server. Bundles must be signed with the key this box trusts, wherever they come from.')],
  () => ({ update: { url: updUrl.value.trim() } }), () => refreshUpdate());
  const updState = h('div', { id: 'update-state', role: 'status', 'aria-live': 'polite' });
  const updMsg = h('p', { id: 'update-msg' });
  const checkBtn = h('button', { type: 'button', id: 'update-check', text: 'Check for an update' });
  const installBtn = h('button', {
    type: 'button', id: 'update-install', class: 'primary', text: 'Install and restart',
  });
  /** @param {S['UpdateStatus']} u */
  function drawUpdate(u) {
    const p = u.progress;
    const doing = u.state === 'idle' ? '' : u.state + (p && p.version ? ' ' + p.version : '')
      + (p && p.percent !== undefined ? ' ' + p.percent + '%' : '') + (p && p.message ? ' (' + p.message + ')' : '');
    const other = u.other_slot ? u.other_slot.slot + ': ' + (u.other_slot.version || 'nothing installed') : '–';
    updState.replaceChildren(h('dl', { class: 'facts' },
      h('dt', { text: 'Running' }),
      h('dd', { text: u.current_version + (u.current_slot ? ' in slot ' + u.current_slot : '') }),
      h('dt', { text: 'Other slot' }), h('dd', { text: other }),
      h('dt', { text: 'Last check' }), h('dd', { text: u.last_check ? ago(u.last_check) : 'never' }),
      h('dt', { text: 'Available' }), h('dd', { text: u.available_version || 'nothing newer' }),
      doing ? [h('dt', { text: 'Now' }), h('dd', { text: doing })] : [],
      u.last_error ? [h('dt', { text: 'Last error' }), h('dd', { class: 'error', text: u.last_error })] : []));
    checkBtn.disabled = installBtn.disabled = !u.supported || u.state !== 'idle';
    installBtn.hidden = !u.available_version;
    if (!u.supported) {
      updMsg.textContent = u.reason ?? '';
      updMsg.className = '';
    }
  }
  /** @param {unknown} err */
  function failed(err) {
    updMsg.textContent = errorText(err);
    updMsg.className = 'error';
  }
  async function refreshUpdate() {
    try {
      drawUpdate(await get('/api/autoupdate/status'));
    } catch (err) {
      failed(err);
    }
  }
  /** @param {() => Promise<S['UpdateStatus']>} action */
  const act = async (action) => {
    updMsg.textContent = '';
    updMsg.className = '';
    try {
      drawUpdate(await action());
    } catch (err) {
      failed(err);
    }
  };
  checkBtn.addEventListener('click', () => act(() => post('/api/autoupdate/check', {})));
  installBtn.addEventListener('click', () => {
    if (!confirm(INSTALL_QUESTION)) return;
    void act(() => post('/api/autoupdate/force', { reason: 'agent_ui_force_reinstall' }));
  });
  void refreshUpdate();
  return {
    node: h('section', { id: 'updates' }, updSource.firstChild, updState,
      h('p', {}, checkBtn, ' ', installBtn), updMsg),
    onEvent: (/** @type {import('./types').EventName} */ name) => {
      if (name === 'update_progress') void refreshUpdate();
    },
  };
}
