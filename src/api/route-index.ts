// Which tinyhttp App answers a request. tinyhttp's matcher tests the pattern of every route an App
// holds, once for its extension step and once for the route: with the agent's 52 routes that was
// 2 µs of a 24 µs `latest` request (docs/performance.md). So the routes are registered once on
// one App (the table, whose entries tinyhttp made), and each path that only its own routes can
// match gets an App of its own holding just those entries (one to three methods), found by the
// path in a Map. tinyhttp still runs every request (its extensions, method match, errors, 404 and
// 405 through the same handlers); a path not in the Map goes to the whole table as before.
import type { App } from '@tinyhttp/app';
import type { IncomingMessage, ServerResponse } from 'node:http';

type Entry = App['middleware'][number];

/**
 * A path in the form tinyhttp's matcher treats alike: its routes match without regard to case or
 * a trailing slash. (Not a regex replace: this runs on every request.)
 */
export function routeKey(path: string): string {
  const lower = path.toLowerCase();
  return lower.length > 1 && lower.endsWith('/') ? lower.slice(0, -1) : lower;
}

/** The dispatcher for `table`'s routes. `newApp` makes an App with the table's options. */
export function routeIndex(table: App, newApp: () => App): (req: IncomingMessage, res: ServerResponse) => void {
  const entries = table.middleware as Entry[];
  // A path goes in the Map only if no route of another path (one with parameters, or a pattern's
  // unescaped '.') matches it, with or without a trailing slash: for such a path the order of the
  // whole table decides, so the whole table answers it.
  const onlyItsOwn = (m: Entry) =>
    !entries.some((other) => routeKey(other.path as string) !== routeKey(m.path as string) && [m.path, `${m.path}/`].some((p) => other.regex?.pattern.test(p as string)));
  const byPath = new Map<string, App>();
  for (const m of entries) {
    if (typeof m.path !== 'string' || !m.regex || (m.regex.keys && m.regex.keys.length > 0) || !onlyItsOwn(m)) continue;
    let app = byPath.get(routeKey(m.path));
    if (!app) byPath.set(routeKey(m.path), (app = newApp()));
    app.middleware.push(m); // in the table's order, as tinyhttp made it
  }
  const attach = (app: App, req: IncomingMessage, res: ServerResponse) => app.attach(req as Parameters<App['attach']>[0], res as Parameters<App['attach']>[1]);
  return (req, res) => {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    attach(byPath.get(routeKey(q === -1 ? url : url.slice(0, q))) ?? table, req, res);
  };
}
