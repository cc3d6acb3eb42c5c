// @ts-check
// Logs (#/logs): the agent's recent records, a minimum level, how many, Follow, Download.
import { get, urls } from './api.js';
import { h } from './dom.js';
import { focusHeading, onLeave, setTitle, view } from './view.js';

/** @typedef {import('./types').GetQuery<'/logs'>} LogQuery */

export async function logsView() {
  setTitle('Logs');
  const level = h('select', { id: 'log-level' },
    ['debug', 'info', 'warn', 'error'].map((v) => h('option', { value: v, text: v, selected: v === 'info' })));
  const tail = h('select', { id: 'log-tail' },
    [50, 200, 1000, 2000].map((v) => h('option', { value: v, text: v + ' newest', selected: v === 200 })));
  const follow = h('input', { type: 'checkbox', id: 'log-follow' });
  const out = h('div', {
    class: 'logs', id: 'log-lines', role: 'log', 'aria-live': 'off', tabindex: '0', 'aria-label': 'Log records',
  });
  const msg = h('p', { class: 'error', role: 'alert' });
  view().replaceChildren(h('section', {}, h('h2', { text: 'Logs' }),
    h('div', { class: 'toolbar' }, h('label', { for: 'log-level', text: 'Level at least' }), level,
      h('label', { for: 'log-tail', text: 'Show' }), tail,
      h('label', { for: 'log-follow' }, follow, ' Follow'),
      h('a', { class: 'button', href: urls.logfile, download: 'printbox-agent.log', text: 'Download' })),
    msg, out));
  async function load() {
    const least = /** @type {LogQuery['level']} */ (level.value);
    const recs = await get('/logs', { level: least, tail: Number(tail.value) });
    msg.textContent = '';
    if (!recs.length) {
      out.replaceChildren(h('span', { text: 'No records at this level. Choose a lower level to see more.' }));
      return;
    }
    const atEnd = out.scrollTop + out.clientHeight >= out.scrollHeight - 8;
    out.replaceChildren(...recs.map((r) => {
      const { level: lv, time, msg: m, previous_run, ...rest } = r;
      const extra = Object.keys(rest).length ? ' ' + JSON.stringify(rest) : '';
      const before = previous_run ? '[previous run] ' : '';
      return h('div', { class: 'l-' + lv }, before + time + ' ' + lv.toUpperCase() + ' ' + (m || '') + extra);
    }));
    if (atEnd || follow.checked) out.scrollTop = out.scrollHeight;
  }
  const reload = () => load().catch((err) => {
    msg.textContent = err.message;
  });
  level.onchange = reload;
  tail.onchange = reload;
  /** @type {ReturnType<typeof setInterval> | undefined} */
  let timer;
  follow.onchange = () => {
    clearInterval(timer);
    timer = follow.checked ? setInterval(reload, 2000) : undefined;
    if (follow.checked) reload();
  };
  onLeave(() => clearInterval(timer));
  await load();
  focusHeading();
}
