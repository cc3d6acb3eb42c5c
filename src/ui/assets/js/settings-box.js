// @ts-check
// The Settings sections about the box itself: the central server link, the data card,
// provisioning, the account's password, and backup / restore.
import { post, restore, urls } from './api.js';
import { errorText, fmtInt, h, when } from './dom.js';
import { clearErrors, field, inp, settingsForm, showError } from './settings-form.js';
import { STORAGE_TEXT } from './status.js';
import { caField } from './ca-field.js';

/** @typedef {import('./types').Schemas} S */
/** @typedef {import('./settings.js').Section} Section */

/** @type {Record<string, string>} */
const LINK_TEXT = {
  off: 'Not linked: no server address set.',
  registering: 'Enrolling with the server…',
  rejected: 'The server refused the enrollment token.',
  online: 'Online.',
  failing: 'Connected, but the server refuses uploads (they are kept and retried).',
  offline: 'Registered, the server is not reachable now (uploads wait).',
};

/**
 * Central server: the link's state (live), address and enrollment token.
 * @param {S['Settings']} s @returns {Section}
 */
export function serverSection(s) {
  const link = h('div', { id: 'server-link' });
  /** @param {S['ServerLinkStatus']} l */
  function drawLink(l) {
    const text = LINK_TEXT[l.state] || l.state;
    const tone = l.state === 'online' ? ' ok' : l.state === 'rejected' || l.state === 'failing' ? ' bad' : '';
    /** @param {string} term @param {unknown} value @param {string} [cls] */
    const fact = (term, value, cls) => (value ? [h('dt', { text: term }), h('dd', { class: cls, text: value })] : null);
    link.replaceChildren(h('p', {}, h('span', { class: 'badge' + tone, text: l.state }), ' ', text),
      h('dl', { class: 'facts' }, h('dt', { text: 'Box id' }), h('dd', { text: l.agent_id }),
        h('dt', { text: 'Waiting to upload' }), h('dd', { text: fmtInt(l.backlog) + ' readings' }),
        fact('Last heartbeat', l.last_heartbeat_at && when(l.last_heartbeat_at)),
        fact('Last upload', l.last_upload_at && when(l.last_upload_at)),
        fact('Upload error', l.upload_error, 'error'),
        fact('Managed settings not applied', l.settings_unmapped && l.settings_unmapped.join('; ')),
        fact('Last error', l.last_error, 'error')));
  }
  drawLink(s.server.link);
  const url = inp('url', s.server.url, { placeholder: 'https://server.example', autocomplete: 'off' });
  const token = inp('password', '', { autocomplete: 'off', placeholder: 'unchanged' });
  // A server whose certificate comes from a private CA: trusted from here, at once (no restart).
  const ca = caField('server.ca_pem', "Server's CA certificate (PEM)", s.server.ca_pem,
    "Optional: the CA that issued the server's certificate (a site's private CA), or its self-signed certificate. Paste it or upload its file; the system's CAs stay trusted.");
  // The link's state is drawn from `server_status` only: the answer to the POST can be older than
  // the event the change itself sent (the link restarts as the settings change), and would undo it.
  const node = settingsForm('settings-server', 'Central server', [link,
    field('server.url', 'Server address', url, 'Empty: this box works alone.'),
    field('server.enrollment_token', 'Enrollment token', token,
      'The join token the server issued. Never shown again; leave empty to keep it.'), ca.node],
  () => ({ server: { url: url.value.trim(), enrollment_token: token.value, ca_pem: ca.text.value.trim() } }), () => {
    token.value = '';
  });
  return {
    node,
    onEvent: (name, data) => {
      if (name === 'server_status') drawLink(data);
    },
  };
}

/** The data card's state (live). @param {S['Settings']} s @returns {Section} */
export function storageSection(s) {
  const storage = h('section', { id: 'storage-state' });
  const MiB = 1048576;
  /** @param {S['StorageStatus'] | null | undefined} st */
  function drawStorage(st) {
    if (!st) {
      storage.replaceChildren(h('h2', { text: 'Data card' }), h('p', { class: 'muted', text: 'No state reported.' }));
      return;
    }
    storage.replaceChildren(h('h2', { text: 'Data card' }),
      h('p', {}, h('span', { class: 'badge' + (st.state === 'ok' ? ' ok' : ' bad'), text: st.state }), ' ',
        STORAGE_TEXT[st.state] || 'Writes work.'),
      h('dl', { class: 'facts' },
        h('dt', { text: 'Free' }),
        h('dd', { text: st.free_bytes === null ? 'unknown' : (st.free_bytes / MiB).toFixed(0) + ' MiB' }),
        h('dt', { text: 'Reserve' }), h('dd', { text: (st.reserve_bytes / MiB).toFixed(0) + ' MiB' }),
        st.pending_readings
          ? [h('dt', { text: 'Kept in memory' }), h('dd', { text: fmtInt(st.pending_readings) + ' readings' })]
          : null,
        st.error ? [h('dt', { text: 'Error' }), h('dd', { class: 'error', text: st.error })] : null));
  }
  drawStorage(s.storage);
  return {
    node: storage,
    onEvent: (name, data) => {
      if (name === 'storage_status') drawStorage(data);
    },
  };
}

/**
 * What provisioning did with printbox.toml on the boot partition (read-only, as on the console).
 * @param {S['Settings']} s @returns {Section}
 */
export function provisioningSection(s) {
  const p = s.provisioning;
  const good = p && (p.state === 'applied' || p.state === 'unchanged');
  return {
    node: h('section', { id: 'provisioning-state' }, h('h2', { text: 'Provisioning' }),
      p
        ? h('p', {},
          h('span', { class: 'badge' + (p.state === 'refused' ? ' bad' : good ? ' ok' : ''), text: p.state }), ' ',
          p.message, h('span', { class: 'muted', text: ' (checked ' + new Date(p.checked_at).toLocaleString() + ')' }))
        : h('p', { class: 'muted', text: 'Provisioning has not run on this box.' })),
  };
}

/** Account (password mode): the agent says when there is no signed-in user. @returns {Section} */
export function accountSection() {
  const cur = inp('password', '', { autocomplete: 'current-password' });
  const next = inp('password', '', { autocomplete: 'new-password', minlength: 8 });
  const accMsg = h('p', { role: 'status', 'aria-live': 'polite' });
  const account = h('form', { id: 'settings-account', novalidate: true, 'data-viewer-ok': true }, h('h2', { text: 'Account' }),
    field('current_password', 'Current password', cur),
    field('new_password', 'New password', next, 'At least 8 characters. Your other sessions are signed out.'),
    h('button', { type: 'submit', class: 'primary', text: 'Change password' }), ' ', accMsg);
  account.addEventListener('submit', async (e) => {
    e.preventDefault();
    clearErrors(account, accMsg);
    try {
      await post('/api/v1/auth/password', { current_password: cur.value, new_password: next.value });
      cur.value = '';
      next.value = '';
      accMsg.textContent = 'Password changed.';
      accMsg.className = 'okmsg';
    } catch (err) {
      const text = errorText(err);
      const target = /current_password/.test(text) ? 'current_password'
        : /new_password|at least/.test(text) ? 'new_password' : null;
      if (target) showError(account, text, accMsg, target);
      else {
        accMsg.textContent = text;
        accMsg.className = 'error';
      }
    }
  });
  return { node: h('section', {}, account) };
}

/**
 * Backup: GET /backup downloads everything the box holds; POST /restore reads such a file back,
 * all or nothing (a cut or changed file is refused, naming the line).
 * @returns {Section}
 */
export function backupSection() {
  const file = h('input', { type: 'file', id: 'restore-file', accept: '.ndjson,application/x-ndjson' });
  const restoreMsg = h('p', { role: 'status', 'aria-live': 'polite' });
  const confirmBox = h('div', { id: 'restore-confirm', hidden: true });
  const submit = h('button', { type: 'submit', text: 'Restore' });
  const form = h('form', { id: 'restore', novalidate: true },
    field('restore-file', 'Restore from a backup file', file,
      'Printers in the file replace those with the same serial here; its meter history is added. A damaged or cut file changes nothing.'),
    submit, ' ', restoreMsg, confirmBox);
  /** @param {string} text @param {string} [cls] */
  const say = (text, cls) => {
    restoreMsg.textContent = text;
    restoreMsg.className = cls || '';
  };
  /** @param {File} f */
  async function run(f) {
    submit.disabled = true;
    const bar = h('progress', { max: 100, value: 0, 'aria-label': 'Restore progress' });
    restoreMsg.replaceChildren('Sending the file… ', bar);
    restoreMsg.className = '';
    try {
      const got = await restore(f, (sent) => {
        bar.setAttribute('value', String(Math.round(sent * 100)));
        if (sent >= 1) restoreMsg.replaceChildren('Restoring on the box…');
      });
      say('Restored ' + fmtInt(got.devices) + ' printers and ' + fmtInt(got.metrics) + ' meter rows'
        + (got.skipped ? ' (' + fmtInt(got.skipped) + ' already here)' : '') + '.'
        + (got.warning ? ' Note: ' + got.warning : ''), 'okmsg');
    } catch (err) {
      say(errorText(err), 'error');
    } finally {
      submit.disabled = false;
    }
  }
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    say('');
    const f = file.files && file.files[0];
    if (!f) {
      say('Choose a backup file first.', 'error');
      return;
    }
    // What will be replaced, asked before anything is sent: the file's own counts, from its trailer.
    const counts = await backupCounts(f);
    const yes = h('button', { type: 'button', class: 'danger primary', text: 'Restore now' });
    const no = h('button', { type: 'button', text: 'Cancel' });
    confirmBox.replaceChildren(
      h('p', { text: 'Restore ' + f.name + '? ' + (counts
        ? 'It holds ' + fmtInt(counts.devices) + ' printers and ' + fmtInt(counts.metrics) + ' meter rows. '
        : 'Its counts cannot be read before it is sent (a compressed or version 1 file). ')
        + 'Printers with the same serial on this box are replaced by the file\'s; the file\'s meter history is added to what is here.' }),
      yes, ' ', no);
    confirmBox.hidden = false;
    yes.focus();
    yes.addEventListener('click', () => { confirmBox.hidden = true; void run(f); });
    no.addEventListener('click', () => { confirmBox.hidden = true; say('Nothing was restored.'); });
  });
  return {
    node: h('section', { id: 'backup' }, h('h2', { text: 'Backup' }),
      h('p', {}, h('a', { href: urls.backup, download: '', id: 'backup-download', text: 'Download a backup' }),
        ' of every printer and its whole meter history.'),
      form),
  };
}

/**
 * A version 2 backup's counts, from its trailer (its last line: docs/backup-format.md); null when
 * the file has none that can be read here.
 * @param {File} f
 * @returns {Promise<{ devices: number, metrics: number } | null>}
 */
async function backupCounts(f) {
  try {
    const tail = await f.slice(Math.max(0, f.size - 4096)).text();
    const last = tail.trimEnd().split('\n').pop() || '';
    const t = JSON.parse(last);
    if (t.kind !== 'trailer' || !t.records) return null;
    const m = t.records.metrics || {};
    return { devices: Number(t.records.device) || 0, metrics: Object.values(m).reduce((a, b) => a + (Number(b) || 0), 0) };
  } catch {
    return null;
  }
}
