// JSON from outside the box (request bodies, managed settings, backups, channel frames) may not
// carry the keys through which a plain object reaches its prototype or its constructor. JSON.parse
// makes `"__proto__"` an own property, harmless by itself; the harm comes when code copies or
// merges such a document into objects, or looks a rule up by one of its keys: `RULES.constructor`
// is `Object`, and `next.constructor.entries = ...` replaces `Object.entries` for the whole
// process. Refusing these keys wherever JSON comes in, and looking rules up by own property only
// (`ownValue`), closes both halves.

/** Refused anywhere in a document: no setting, field or frame of the protocol has such a name. */
export const INHERITED_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

export interface InheritedKey {
  key: string;
  /** Where it is: `discovery.__proto__`, `snmp.v3[0].constructor`. */
  path: string;
}

interface Node {
  value: object;
  parent?: Node;
  /** The key or array index under which `value` sits in its parent. */
  step?: string | number;
}

function pathOf(node: Node, key: string): string {
  const steps: (string | number)[] = [key];
  for (let n: Node | undefined = node; n?.step !== undefined; n = n.parent) steps.push(n.step);
  return steps
    .reverse()
    .map((s, i) => (typeof s === 'number' ? `[${s}]` : i === 0 ? s : `.${s}`))
    .join('');
}

/**
 * A refused key in a parsed JSON value, with its path; undefined when there is none. An object's
 * own keys are looked at before what is nested in them, so the outermost is the one named.
 * Iterative: a body may nest arrays 30,000 deep, past the stack of a recursion.
 */
export function findInheritedKey(value: unknown): InheritedKey | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const stack: Node[] = [{ value }];
  // Children are pushed last first, so that they are looked at in the document's order.
  while (stack.length) {
    const node = stack.pop()!;
    const v = node.value as Record<string, unknown>;
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) {
        const child: unknown = v[i];
        if (typeof child === 'object' && child !== null) stack.push({ value: child, parent: node, step: i });
      }
      continue;
    }
    const keys = Object.keys(v);
    for (const k of keys) if (INHERITED_KEYS.has(k)) return { key: k, path: pathOf(node, k) };
    for (let i = keys.length - 1; i >= 0; i--) {
      const child = v[keys[i]];
      if (typeof child === 'object' && child !== null) stack.push({ value: child, parent: node, step: keys[i] });
    }
  }
  return undefined;
}

/** The refusal in words, naming the key and where it is; undefined when the value has none. */
export function inheritedKeyProblem(value: unknown): string | undefined {
  const found = findInheritedKey(value);
  if (!found) return undefined;
  // A body nested thousands deep has a path as long: the end of it says where.
  const path = found.path.length > 200 ? `…${found.path.slice(-200)}` : found.path;
  const where = found.path === found.key ? '' : ` (at ${path})`;
  return `key "${found.key}"${where} is not accepted: __proto__, constructor and prototype are refused anywhere in a document`;
}

/** `table[key]` when `table` has it as its own property: an inherited name picks nothing. */
export function ownValue<T>(table: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(table, key) ? table[key] : undefined;
}

// Names the box reads from the network (a supply's description, an IPP marker name, a paper
// tray's name, a TXT key) become keys of what it stores. A printer may call a supply
// `constructor`: stored as given, every later backup would carry a key the import refuses, and
// the box could no longer restore its own backup. Such a name is renamed, never dropped (the
// reading is kept): `constructor` -> `supply_constructor`. The renamed name is refused by nothing
// (the prefix makes it none of INHERITED_KEYS), so whatever the box writes, it restores
// (test/unit/model/inherited-keys.test.ts checks this for every refused key).

/** What a renamed name is prefixed with, by the kind of name it is. */
export type NameKind = 'supply' | 'tray' | 'txt' | 'key';

/** `name` as a key the box may store: as given, unless the import would refuse it, then `<kind>_<name>`. */
export function storableKey(name: string, kind: NameKind): string {
  return INHERITED_KEYS.has(name) ? `${kind}_${name}` : name;
}

/** The kind of the names under a field of a record (the supply maps, the trays' status); else `key`. */
const KIND_UNDER: ReadonlyMap<string, NameKind> = new Map<string, NameKind>([
  ['toner_levels', 'supply'],
  ['toner_last', 'supply'],
  ['toner_avg', 'supply'],
  ['supply_part_numbers', 'supply'],
  ['supply_types', 'supply'],
  ['paper_tray_status', 'tray'],
  ['txt', 'txt'],
]);

/**
 * A copy of a JSON value with every refused key renamed as `storableKey` does (by the field it
 * sits under), for what a box stored before the producers renamed: its backup restores too. When
 * a renamed key meets one of the same name in the same object, the first in order is kept.
 * Iterative, like findInheritedKey: stored JSON may nest deep.
 */
export function withStorableKeys<T>(value: T): T {
  if (typeof value !== 'object' || value === null || findInheritedKey(value) === undefined) return value;
  const copyOf = (v: object): object => (Array.isArray(v) ? [] : {});
  const root = copyOf(value);
  const stack: { from: object; to: object; kind: NameKind }[] = [{ from: value, to: root, kind: 'key' }];
  while (stack.length) {
    const { from, to, kind } = stack.pop()!;
    const put = (k: string | number, v: unknown, childKind: NameKind) => {
      let out = v;
      if (typeof v === 'object' && v !== null) {
        out = copyOf(v);
        stack.push({ from: v, to: out as object, kind: childKind });
      }
      if (Array.isArray(to)) (to as unknown[])[k as number] = out;
      else {
        const name = storableKey(k as string, kind);
        if (!Object.hasOwn(to, name)) Object.defineProperty(to, name, { value: out, enumerable: true, writable: true, configurable: true });
      }
    };
    if (Array.isArray(from)) from.forEach((v, i) => put(i, v, kind));
    else for (const [k, v] of Object.entries(from)) put(k, v, KIND_UNDER.get(k) ?? 'key');
  }
  return root as T;
}
