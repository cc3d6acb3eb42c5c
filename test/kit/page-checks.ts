// What every UI test checks on a page the UI drew: axe-core's accessibility rules, and that
// nothing is wider than the window (tables become cards on a phone).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './agent.js';

type Page = import('playwright-core').Page;

const AXE = readFileSync(join(repoRoot, 'node_modules/axe-core/axe.min.js'), 'utf8');

/**
 * No serious or critical axe-core violation in `scope` (a selector; the whole document when left
 * out). axe is evaluated through the DevTools protocol, not added as a <script>, so the page's CSP
 * stays as the box serves it.
 */
export async function accessible(page: Page, what: string, scope?: string): Promise<void> {
  if (!(await page.evaluate('typeof window.axe !== "undefined"'))) await page.evaluate(AXE);
  const context = scope ? `document.querySelector(${JSON.stringify(scope)})` : 'document';
  const found = (await page.evaluate(`axe.run(${context}, { resultTypes: ['violations'] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => n.target.join(' ')).slice(0, 5) })))`)) as { id: string; impact: string; help: string; nodes: string[] }[];
  const bad = found.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert.deepEqual(bad, [], `${what}: axe violations ${JSON.stringify(bad, null, 1)}`);
}

/** Nothing wider than the window; when something is, the message names the deepest elements that reach past its edge. */
export async function fitsWidth(page: Page, what: string): Promise<void> {
  const [doc, win] = (await page.evaluate('[document.documentElement.scrollWidth, window.innerWidth]')) as [number, number];
  const wide = doc <= win ? [] : ((await page.evaluate(`[...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > innerWidth + 0.5 && ![...e.children].some((c) => c.getBoundingClientRect().right > innerWidth + 0.5)).slice(0, 5).map((e) => e.tagName + (e.id ? '#' + e.id : '') + '.' + [...e.classList].join('.') + ' ' + Math.round(e.getBoundingClientRect().right) + ' px: ' + (e.textContent || '').slice(0, 60))`)) as string[]);
  assert.ok(doc <= win, `${what}: the page is ${doc} px wide in a ${win} px window: ${wide.join('; ')}`);
}
