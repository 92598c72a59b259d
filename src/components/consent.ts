/**
 * What a plugin runs, for consent: the hooks, MCP and LSP servers, monitors and bin/ executables
 * of a marketplace plugin, and the hook and extension modules of an npm plugin, as one line each
 * ("hook PostToolUse [Write|Edit]: python3 /…/format.py"), and what changed between the
 * installed version and the one about to be installed. Installs and updates of both kinds of
 * plugin show these before anything is committed and ask through one callback
 * (`approveExecutables`, given `ExecutableRequest`s; the CLI's is src/cli/consent.ts).
 *
 * What counts for npm plugins: `hooks` and `extensions` modules, which the host imports and calls
 * on its own at events (every tool call, session start) without anyone invoking them. `tools` and
 * `commands` run only when the model or the user calls them by name, which is what installing a
 * tool package is for; they are not asked about (docs/components.md, "Consent for what runs").
 */
import { createHmac, randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import type { TSchema } from "../manifest/typebox.js";
import type { PluginManifest } from "../manifest/plugin-manifest.js";
import { isRecord } from "../manifest/result.js";
import { scanPluginComponents } from "./scan.js";
import { HookSchema, LspServerSchema, McpServerSchema, MonitorSchema } from "./schemas.js";
import type { Component } from "./types.js";

/** One thing a plugin runs. */
export interface Executable {
  /** `kind name`, stable across versions: the key changes are matched by. */
  key: string;
  kind: Component["kind"];
  name: string;
  /** The command line as it will run (`${CLAUDE_PLUGIN_ROOT}` resolved), with env names. */
  runs: string;
  /**
   * `runs` with the plugin's own folder written `<plugin>`: what versions are compared by. A
   * marketplace plugin's folder name carries its version, so the same hook of two versions would
   * otherwise always look changed.
   */
  same: string;
  /**
   * Everything else that decides what runs, compared between versions: each field of the
   * definition as written (`env.NODE_OPTIONS`, `cwd`, `args`...), and `content` (a hash) for
   * executables that are a file of the plugin. Values of maps that may hold secrets (`env`,
   * `headers`) and of fields no schema knows are kept as hashes, never as written.
   */
  fields: Record<string, { value: string; shown?: string }>;
}

/** Component kinds of an npm plugin that run without being invoked: these need consent. */
const NPM_EXECUTABLE_KINDS: ReadonlySet<Component["kind"]> = new Set(["hook", "extension"]);

/**
 * The schema of each kind of executable that is written as JSON. Every field of a definition is
 * compared between versions except those in HARMLESS_FIELDS, so a field a schema gains later, or one no
 * schema knows, counts by default (fail closed).
 */
export const DEFINITION_SCHEMAS: Partial<Record<Component["kind"], TSchema>> = { hook: HookSchema, "mcp-server": McpServerSchema, "lsp-server": LspServerSchema, monitor: MonitorSchema };

/**
 * Fields that change nothing that runs: text for people. Everything else is compared, including
 * `env` values and `cwd` (`NODE_OPTIONS` alone loads code), a remote server's `type`, `url` and
 * `headers`, a hook's `async` and every timeout and restart setting: those decide how long and
 * how often a program runs and where its data goes; they rarely change, so asking costs little.
 */
export const HARMLESS_FIELDS: Partial<Record<Component["kind"], readonly string[]>> = { monitor: ["description"] };

/** Kinds whose program is a file of the plugin itself: what runs is that file's content. */
const FILE_KINDS = (c: Component): boolean => c.kind === "bin" || (c.kind === "hook" && c.hookType === "script");

/**
 * Keyed with a secret of this process: the digests only compare two versions read now, and an
 * env value's digest handed to an `approveExecutables` callback cannot be checked against guesses.
 */
const DIGEST_KEY = randomBytes(32);
const digest = (text: string | Buffer): string => createHmac("sha256", DIGEST_KEY).update(text).digest("hex");

/** JSON with sorted keys, so the same definition written in another key order compares equal. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (isRecord(value)) return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`).join(",")}}`;
  return JSON.stringify(value) ?? "undefined";
}

/** A value that equals nothing: what could not be read counts as changed. */
const unreadable = (): { value: string } => ({ value: `unreadable ${Math.random()}` });

/** The value at a JSON pointer (RFC 6901) of a parsed document. */
function atPointer(doc: unknown, at: string): unknown {
  let value = doc;
  for (const raw of at.split("/").slice(1)) {
    const key = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (!isRecord(value) && !Array.isArray(value)) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

/**
 * The compared fields of one executable: its definition read again from its file (the
 * component records carry env names only, so that no secret reaches `show` or the boot index),
 * or the hash of its file. `docs` caches parsed files across one plugin's components.
 */
function fieldsOf(c: Component, npm: boolean, docs: Map<string, unknown>): Executable["fields"] {
  if (npm || FILE_KINDS(c)) {
    try {
      return { content: { value: digest(readFileSync(c.file)) } };
    } catch {
      return { content: unreadable() };
    }
  }
  const schema = DEFINITION_SCHEMAS[c.kind];
  if (!schema || c.pointer === undefined) return { definition: unreadable() };
  if (!docs.has(c.file)) {
    try {
      docs.set(c.file, JSON.parse(readFileSync(c.file, "utf8")) as unknown);
    } catch {
      docs.set(c.file, undefined);
    }
  }
  const raw = atPointer(docs.get(c.file), c.pointer);
  if (!isRecord(raw)) return { definition: unreadable() };
  const properties = (schema.properties ?? {}) as Record<string, TSchema>;
  const out: Executable["fields"] = {};
  for (const [field, value] of Object.entries(raw)) {
    if (HARMLESS_FIELDS[c.kind]?.includes(field)) continue;
    const known = Object.hasOwn(properties, field) ? properties[field] : undefined;
    // A map of strings (env, headers) may hold tokens: compared per key, by hash.
    const secretMap = known !== undefined && "patternProperties" in known;
    if (secretMap && isRecord(value)) for (const [k, v] of Object.entries(value)) out[`${field}.${k}`] = { value: digest(canonical(v)) };
    else if (known && !secretMap) out[field] = { value: canonical(value), shown: canonical(value) };
    else out[field] = { value: digest(canonical(value)) };
  }
  return out;
}

/**
 * The executables among `components`, read from `root`. `as`: the folder the plugin will run
 * from when that is not `root` (an install reads a scratch copy); paths in `runs` name it, and
 * versions are compared without it. `npm`: the components are an npm plugin's modules.
 */
export function executablesOf(components: readonly Component[], options: { root?: string; as?: string; npm?: boolean } = {}): Executable[] {
  const out: Executable[] = [];
  const seen = new Map<string, number>();
  const runsFrom = options.as ?? options.root;
  const docs = new Map<string, unknown>();
  for (const c of components) {
    let runs: string;
    let base: string;
    if (options.npm) {
      if (!NPM_EXECUTABLE_KINDS.has(c.kind)) continue;
      const rel = options.root ? path.relative(options.root, c.file) : c.file;
      const feature = /\(feature [^)]+\)/.exec(c.note ?? "")?.[0];
      runs = `imported by the host: ${runsFrom ? path.join(runsFrom, rel) : c.file}${feature ? ` ${feature}` : ""}`;
      base = `${c.kind} ${rel.split(path.sep).join("/")}`;
    } else {
      if (!c.exec && !c.url) continue;
      runs = c.exec ? `${[c.exec.command, ...c.exec.args].join(" ")}${c.exec.env.length ? `  (env: ${c.exec.env.join(", ")})` : ""}` : `connects to ${c.url}`;
      base = `${c.kind} ${c.name}`;
    }
    const n = (seen.get(base) ?? 0) + 1;
    seen.set(base, n);
    out.push({ key: n === 1 ? base : `${base} #${n}`, kind: c.kind, name: c.name, runs, same: runsFrom ? runs.split(runsFrom).join("<plugin>") : runs, fields: fieldsOf(c, Boolean(options.npm), docs) });
  }
  return out;
}

/** What an install or update changes in what a plugin runs. */
export interface ExecutableChanges {
  added: Executable[];
  changed: { before: Executable; after: Executable }[];
  removed: Executable[];
}

/** Compare the executables of the installed version (none for a new install) with the new one. */
export function diffExecutables(before: readonly Executable[], after: readonly Executable[]): ExecutableChanges {
  const old = new Map(before.map((e) => [e.key, e]));
  const added: Executable[] = [];
  const changed: ExecutableChanges["changed"] = [];
  for (const e of after) {
    const prev = old.get(e.key);
    if (!prev) added.push(e);
    else if (prev.same !== e.same || fieldChanges(prev, e).length > 0) changed.push({ before: prev, after: e });
    old.delete(e.key);
  }
  return { added, changed, removed: [...old.values()] };
}

/**
 * The fields that differ between two versions of one executable, one line each. Values are shown
 * only for fields a schema knows that are not maps of strings: an env or header value, a file's
 * content or a field no schema knows is named, never printed.
 */
function fieldChanges(before: Executable, after: Executable): string[] {
  const lines: string[] = [];
  const clip = (text: string) => (text.length > 120 ? `${text.slice(0, 117)}...` : text);
  for (const field of new Set([...Object.keys(before.fields), ...Object.keys(after.fields)])) {
    const was = before.fields[field];
    const now = after.fields[field];
    if (was?.value === now?.value) continue;
    const show = (f: { shown?: string } | undefined) => (f?.shown !== undefined ? clip(f.shown) : "(not shown)");
    if (was?.shown === undefined && now?.shown === undefined) lines.push(`${field} ${!was ? "added" : !now ? "removed" : "changed"} (value not shown)`);
    else if (!was) lines.push(`${field} added: ${show(now)}`);
    else if (!now) lines.push(`${field} removed (was ${show(was)})`);
    else lines.push(`${field} changed: ${show(was)} -> ${show(now)}`);
  }
  return lines;
}

/** True when the change adds or alters something that runs (removals need no consent). */
export function needsConsent(changes: ExecutableChanges): boolean {
  return changes.added.length > 0 || changes.changed.length > 0;
}

/** True when the change shows anything (an update that only removes is shown, not asked). */
export function hasChanges(changes: ExecutableChanges): boolean {
  return needsConsent(changes) || changes.removed.length > 0;
}

/**
 * What `approveExecutables` is asked about: one plugin of an install or update whose executables
 * change. It is called when anything changes; it must ask (and throw to refuse) only when
 * `needsConsent(changes)`: an update that only removes commands is shown, never refused.
 */
export interface ExecutableRequest {
  /** `name@marketplace`, or the npm package name. */
  id: string;
  version: string;
  /** Which kind of plugin: marketplace plugins run commands, npm plugins' modules are imported. */
  source: "marketplace" | "npm";
  /** Marketplace plugins: where it is installed. npm plugins are the user's. */
  scope: "user" | "project";
  /** An update of an installed version (changes are against it), or a new install. */
  update: boolean;
  dryRun: boolean;
  changes: ExecutableChanges;
  /** npm plugins with --allow-scripts: the install scripts that run once this is allowed (plugins/install-scripts.ts). */
  scripts?: readonly InstallScript[];
}

/** One lifecycle script an install will run: the package, the event and its command as written. */
export interface InstallScript {
  pkg: string;
  event: string;
  command: string;
}

/** The lines that show the install scripts, like executables: `+ script <pkg> <event>: <command>`. */
export function describeInstallScripts(scripts: readonly InstallScript[] | undefined): string[] {
  return (scripts ?? []).map((s) => `+ script ${s.pkg} ${s.event}: ${s.command}`);
}

/** The lines that show a change, for a terminal or an error message. */
export function describeExecutableChanges(changes: ExecutableChanges): string[] {
  return [
    ...changes.added.map((e) => `+ ${e.kind} ${e.name}: ${e.runs}`),
    ...changes.changed.flatMap(({ before, after }) => [
      `~ ${after.kind} ${after.name}: ${after.runs}`,
      ...(before.same !== after.same ? [`    was: ${before.runs}`] : []),
      ...fieldChanges(before, after).map((line) => `    ${line}`),
    ]),
    ...changes.removed.map((e) => `- ${e.kind} ${e.name}: ${e.runs}`),
  ];
}

/** One version of an npm plugin, as far as consent needs it. */
export interface NpmPluginVersion {
  /** The folder it is read from. */
  dir: string;
  manifest: PluginManifest;
  /** `xcsh` or `pi`: the package.json key the manifest sits under. */
  manifestKey?: string;
}

/**
 * What an npm plugin's install or update changes in the modules the host runs on its own (hooks,
 * extensions), `after` read from the staging copy, `before` from the installed folder (absent
 * for a new install); `liveDir` is where it will be (`<plugins>/node_modules/<name>`).
 */
export function npmExecutableChanges(before: NpmPluginVersion | undefined, after: NpmPluginVersion, liveDir: string): ExecutableChanges {
  const read = (v: NpmPluginVersion) =>
    executablesOf(scanPluginComponents(v.dir, { rootKind: "npm", manifest: v.manifest, manifestKey: v.manifestKey ?? "xcsh", reportDeclaredPaths: false }).components, { root: path.resolve(v.dir), as: liveDir, npm: true });
  return diffExecutables(before ? read(before) : [], read(after));
}
