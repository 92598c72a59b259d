/**
 * A tool's static definition (docs/lazy-tools.md): what a host reads of a tool before it runs it
 * (name, label, description, parameters, data fields such as `hidden`) and which methods it has,
 * in a form that survives JSON. Written by the validation child for plugins that declare
 * `staticTools`, kept in the boot index's module records, and turned back into a tool object by
 * a lazy boot (boot/lazy-tools.ts) without importing the module.
 *
 * TypeBox marks schemas with symbols (`Symbol.for("TypeBox.Kind")`, `TypeBox.Optional`, ...),
 * which JSON drops; a schema without them is refused by the host's `Value.Check` and compilers.
 * They are kept beside the JSON, by JSON pointer and registry key, and restored with
 * `Symbol.for(key)`: a registered symbol is the same in every copy of TypeBox 0.x in the process,
 * so the restored schema carries the host's own `Kind`, exactly as the factory's did.
 */
import { createRequire } from "node:module";
import { errorMessage } from "../core/errors.js";

/*
 * node:util by `require`, when a definition is first compared (a lazy tool's first use): as an
 * ES import it is loaded with the lazy boot, and its ES facade reads every export, `TextDecoder`
 * included, which loads Node's text decoding (about 2 ms of a lazy boot's CPU, for nothing).
 */
const require = createRequire(import.meta.url);
const isDeepStrictEqual = (a: unknown, b: unknown): boolean => (require("node:util") as typeof import("node:util")).isDeepStrictEqual(a, b);

/** Methods a lazy tool forwards to the real one once its module is loaded. */
export const LAZY_METHODS = ["execute", "onSession", "renderCall", "renderResult"] as const;
/** Fields every definition has; they are the tool record's own fields (boot/format.ts `ToolRecord`). */
const CORE_FIELDS = new Set(["name", "label", "description", "parameters"]);

/** Symbols of a schema: JSON pointer → registry key → value. */
export type SchemaSymbols = Record<string, Record<string, string | number | boolean>>;

/** What the tool record keeps besides name, label, description and parameters. */
export interface LazyPart {
  symbols: SchemaSymbols;
  /** Other non-function fields (`hidden`, `deferrable`, ...), as JSON. */
  data: Record<string, unknown>;
  /** Which of `LAZY_METHODS` the tool has (`execute` always). */
  methods: string[];
}

/** A tool's whole static definition. */
export interface StaticDefinition extends LazyPart {
  name: unknown;
  label: unknown;
  description: unknown;
  parameters: unknown;
}

/** Why a tool cannot be described statically: the field and what is wrong with it. */
export interface DefinitionProblem {
  field: string;
  message: string;
}

const pointerPart = (key: string | number) => String(key).replace(/~/g, "~0").replace(/\//g, "~1");

function jsonCopy(value: unknown): unknown {
  return value === undefined ? undefined : JSON.parse(JSON.stringify(value));
}

/** The registered symbols of `schema` by pointer; throws on a symbol that cannot be restored. */
function collectSymbols(value: unknown, at: string, out: SchemaSymbols, seen: Set<object>): void {
  if (value === null || typeof value !== "object" || seen.has(value)) return;
  seen.add(value);
  for (const symbol of Object.getOwnPropertySymbols(value)) {
    const key = Symbol.keyFor(symbol);
    const held = (value as Record<symbol, unknown>)[symbol];
    if (key === undefined) throw new Error(`${at || "/"} holds ${String(symbol)}, a symbol that is not registered (Symbol.for), so it cannot be restored`);
    if (typeof held !== "string" && typeof held !== "number" && typeof held !== "boolean") throw new Error(`${at || "/"} holds ${key} with a value that is not a string, number or boolean`);
    (out[at] ??= {})[key] = held;
  }
  const entries = Array.isArray(value) ? value.map((item, i) => [i, item] as const) : Object.entries(value);
  for (const [key, item] of entries) collectSymbols(item, `${at}/${pointerPart(key)}`, out, seen);
}

/** Every string key a host can read on `tool`, own and inherited (as the host's tool proxy walks it). */
function toolKeys(tool: object): string[] {
  const keys = new Set<string>();
  for (let current: object | null = tool; current && current !== Object.prototype; current = Object.getPrototypeOf(current)) {
    for (const key of Object.getOwnPropertyNames(current)) if (key !== "constructor") keys.add(key);
  }
  return [...keys];
}

/** The static definition of a tool the factory returned, or the first field that has none. */
export function describeDefinition(tool: object): { ok: true; definition: StaticDefinition } | { ok: false; problem: DefinitionProblem } {
  const read = (key: string): unknown => (tool as Record<string, unknown>)[key];
  const definition: StaticDefinition = { name: undefined, label: undefined, description: undefined, parameters: undefined, symbols: {}, data: {}, methods: [] };
  for (const key of toolKeys(tool)) {
    let value: unknown;
    try {
      value = read(key);
    } catch (error) {
      return { ok: false, problem: { field: key, message: `reading "${key}" threw: ${errorMessage(error)}` } };
    }
    if (typeof value === "function") {
      if (!(LAZY_METHODS as readonly string[]).includes(key)) {
        return { ok: false, problem: { field: key, message: `"${key}" is a method a lazy tool cannot forward (only ${LAZY_METHODS.join(", ")} are)` } };
      }
      definition.methods.push(key);
      continue;
    }
    let copy: unknown;
    try {
      copy = jsonCopy(value);
    } catch (error) {
      return { ok: false, problem: { field: key, message: `"${key}" cannot be written as JSON: ${errorMessage(error)}` } };
    }
    if (key === "parameters") {
      try {
        collectSymbols(value, "", definition.symbols, new Set());
      } catch (error) {
        return { ok: false, problem: { field: "parameters", message: errorMessage(error) } };
      }
    }
    if (CORE_FIELDS.has(key)) (definition as unknown as Record<string, unknown>)[key] = copy;
    else if (copy !== undefined) definition.data[key] = copy;
  }
  definition.methods.sort();
  return { ok: true, definition };
}

/** The first field in which two definitions differ, or undefined when they are the same. */
export function definitionDifference(recorded: StaticDefinition, actual: StaticDefinition): string | undefined {
  for (const field of ["name", "label", "description", "parameters", "symbols", "methods"] as const) {
    if (!isDeepStrictEqual(recorded[field], actual[field])) return field === "symbols" ? "parameters" : field;
  }
  const keys = new Set([...Object.keys(recorded.data), ...Object.keys(actual.data)]);
  for (const key of keys) if (!isDeepStrictEqual(recorded.data[key], actual.data[key])) return key;
  return undefined;
}

/** `Symbol.for(key)`, kept: a registry lookup per symbol is a runtime call, and a boot restores thousands. */
const registered = new Map<string, symbol>();
function registeredSymbol(key: string): symbol {
  let symbol = registered.get(key);
  if (symbol === undefined) registered.set(key, (symbol = Symbol.for(key)));
  return symbol;
}

/**
 * The parts of a recorded JSON pointer, unescaped, kept by pointer: a lazy boot restores the same
 * few pointers ("", "/properties/query", ...) on every tool, and walking a pointer sliced afresh
 * costs each part a new string that the property lookup must then find in the string table;
 * parts kept across tools are looked up once. `at` is "" (the root) or "/a/b": the parts are
 * what follows each "/" (what comes before the first "/" is not a part, as in
 * `at.split("/").slice(1)`). Bounded by the distinct pointers of the records a process reads.
 */
const pointers = new Map<string, readonly string[]>();
function pointerParts(at: string): readonly string[] {
  let parts = pointers.get(at);
  if (parts === undefined) {
    parts = at.split("/").slice(1).map((part) => (part.includes("~") ? part.replace(/~1/g, "/").replace(/~0/g, "~") : part));
    pointers.set(at, parts);
  }
  return parts;
}

/** Put the recorded symbols back on `schema` (a JSON copy, changed in place) and return it; runs for every lazy tool at boot. */
export function restoreSchema(schema: unknown, symbols: SchemaSymbols): unknown {
  for (const at in symbols) {
    let target: unknown = schema;
    const parts = pointerParts(at);
    for (let i = 0; i < parts.length && target !== null && typeof target === "object"; i++) target = (target as Record<string, unknown>)[parts[i]!];
    if (target === null || typeof target !== "object") throw new Error(`the recorded schema has no value at ${at || "/"}`);
    const held = symbols[at]!;
    for (const key in held) (target as Record<symbol, unknown>)[registeredSymbol(key)] = held[key];
  }
  return schema;
}
