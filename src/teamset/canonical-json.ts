/**
 * JSON text with the key order a format prescribes. `JSON.stringify` cannot do it: it writes
 * integer-like keys ("123", a valid npm and marketplace name) before all others whatever the
 * insertion order, so "sorted" would not be sorted. Same layout as `JSON.stringify(v, null, 2)`,
 * plus a trailing newline.
 */

/** Code-point order (never locale order: the bytes must be the same on every machine). */
export function compareKeys(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** `known` first in that order (those present), then the other keys of `object` in their own order. */
export function knownFirst(object: Record<string, unknown>, known: readonly string[]): string[] {
  return [...known.filter((k) => Object.hasOwn(object, k)), ...Object.keys(object).filter((k) => !known.includes(k))];
}

/** The keys of `object` sorted. */
export function sortedKeys(object: Record<string, unknown>): string[] {
  return Object.keys(object).sort(compareKeys);
}

/** `value` as 2-space JSON, each object's keys in the order `keysOf(object, pathOfKeys)` gives. */
export function orderedJson(value: unknown, keysOf: (object: Record<string, unknown>, at: readonly string[]) => string[]): string {
  const write = (v: unknown, at: readonly string[], indent: string): string => {
    const inner = `${indent}  `;
    if (Array.isArray(v)) return v.length === 0 ? "[]" : `[\n${v.map((item, i) => inner + write(item ?? null, [...at, String(i)], inner)).join(",\n")}\n${indent}]`;
    if (v !== null && typeof v === "object") {
      const object = v as Record<string, unknown>;
      const keys = keysOf(object, at).filter((k) => object[k] !== undefined);
      return keys.length === 0 ? "{}" : `{\n${keys.map((k) => `${inner}${JSON.stringify(k)}: ${write(object[k], [...at, k], inner)}`).join(",\n")}\n${indent}}`;
    }
    return JSON.stringify(v) ?? "null";
  };
  return `${write(value, [], "")}\n`;
}
