/**
 * Tables looked up by strings that come from outside: JSON-RPC method names, CSS keywords and
 * colour names, tag names and language names in fix input, command-line flags. A plain object
 * literal inherits from Object.prototype, so `table['constructor']` or `table['__proto__']` finds
 * a function or an object instead of nothing, and the code after it fails in ways nobody wrote
 * for. A lookup table has no prototype: only its own keys are in it.
 */
export function lookupTable<V>(entries: Readonly<Record<string, V>>): Readonly<Partial<Record<string, V>>> {
  return Object.freeze(Object.assign(Object.create(null) as Record<string, V>, entries));
}

/** Whether `key` is one of the table's own keys (never an inherited name). */
export const hasKey = <K extends string>(table: Readonly<Partial<Record<K, unknown>>>, key: string): key is K => Object.hasOwn(table, key);
