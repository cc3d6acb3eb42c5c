// @ts-check
// A CA certificate a server is trusted by (Settings: Central server, Notifications): pasted into
// the box, or read from a file (.pem, .crt) into it, then saved with the section. The box checks
// it when saved (a PEM CA certificate, or a self-signed one) and says under the field what is
// wrong; nothing is trusted before the section is saved.
import { h } from './dom.js';
import { field } from './settings-form.js';

/**
 * @param {string} path the setting ("server.ca_pem")
 * @param {string} label
 * @param {string} current the stored PEM ("" for none)
 * @param {string} hint
 * @returns {{ node: HTMLElement, text: HTMLTextAreaElement }}
 */
export function caField(path, label, current, hint) {
  const text = h('textarea', { rows: 4, spellcheck: 'false', placeholder: '-----BEGIN CERTIFICATE-----' });
  text.value = current;
  const id = 's-' + path.replace(/[.[\]]/g, '-');
  const file = h('input', { type: 'file', id: id + '-file', accept: '.pem,.crt,.cer,application/x-pem-file,application/x-x509-ca-cert' });
  const read = h('p', { class: 'hint', id: id + '-file-msg', 'aria-live': 'polite' });
  file.addEventListener('change', async () => {
    const f = file.files && file.files[0];
    if (!f) return;
    // A certificate is a few KiB; anything far larger is no certificate (the box refuses it anyway).
    if (f.size > 65536) {
      read.textContent = f.name + ' is too large for a certificate.';
      return;
    }
    text.value = (await f.text()).trim();
    // The form counts it as an edit (the leave guard) like typing would.
    text.dispatchEvent(new Event('input', { bubbles: true }));
    read.textContent = 'Read ' + f.name + ': save to trust it.';
  });
  const clear = h('button', {
    type: 'button', text: 'Remove the certificate',
    onclick: () => {
      text.value = '';
      text.dispatchEvent(new Event('input', { bubbles: true }));
    },
  });
  const node = h('div', { class: 'ca-field' }, field(path, label, text, hint),
    h('p', {}, h('label', { for: file.id, text: 'Or upload a certificate file (.pem, .crt) ' }), file, ' ', clear), read);
  return { node, text };
}
