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
import path from "node:path";
import type { PluginManifest } from "../manifest/plugin-manifest.js";
import { scanPluginComponents } from "./scan.js";
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
}

/** Component kinds of an npm plugin that run without being invoked: these need consent. */
const NPM_EXECUTABLE_KINDS: ReadonlySet<Component["kind"]> = new Set(["hook", "extension"]);

/**
 * The executables among `components`, read from `root`. `as`: the folder the plugin will run
 * from when that is not `root` (an install reads a scratch copy); paths in `runs` name it, and
 * versions are compared without it. `npm`: the components are an npm plugin's modules.
 */
export function executablesOf(components: readonly Component[], options: { root?: string; as?: string; npm?: boolean } = {}): Executable[] {
  const out: Executable[] = [];
  const seen = new Map<string, number>();
  const runsFrom = options.as ?? options.root;
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
      if (!c.exec && !(c.kind === "mcp-server" && c.url)) continue;
      runs = c.exec ? `${[c.exec.command, ...c.exec.args].join(" ")}${c.exec.env.length ? `  (env: ${c.exec.env.join(", ")})` : ""}` : `connects to ${c.url}`;
      base = `${c.kind} ${c.name}`;
    }
    const n = (seen.get(base) ?? 0) + 1;
    seen.set(base, n);
    out.push({ key: n === 1 ? base : `${base} #${n}`, kind: c.kind, name: c.name, runs, same: runsFrom ? runs.split(runsFrom).join("<plugin>") : runs });
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
    else if (prev.same !== e.same) changed.push({ before: prev, after: e });
    old.delete(e.key);
  }
  return { added, changed, removed: [...old.values()] };
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
}

/** The lines that show a change, for a terminal or an error message. */
export function describeExecutableChanges(changes: ExecutableChanges): string[] {
  return [
    ...changes.added.map((e) => `+ ${e.kind} ${e.name}: ${e.runs}`),
    ...changes.changed.flatMap(({ before, after }) => [`~ ${after.kind} ${after.name}: ${after.runs}`, `    was: ${before.runs}`]),
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
