/**
 * What a plugin runs, for consent: the hooks, MCP and LSP servers, monitors and bin/ executables
 * of a plugin as one line each ("hook PostToolUse [Write|Edit]: python3 /…/format.py"), and what
 * changed between the installed version and the one about to be installed. Installs and updates
 * show these before anything is committed and ask (src/cli/consent.ts).
 */
import type { Component } from "./types.js";

/** One thing a plugin runs. */
export interface Executable {
  /** `kind name`, stable across versions: the key changes are matched by. */
  key: string;
  kind: Component["kind"];
  name: string;
  /** The command line as it will run (`${CLAUDE_PLUGIN_ROOT}` resolved), with env names. */
  runs: string;
}

/** The executables among `components`. */
export function executablesOf(components: readonly Component[]): Executable[] {
  const out: Executable[] = [];
  const seen = new Map<string, number>();
  for (const c of components) {
    if (!c.exec && !(c.kind === "mcp-server" && c.url)) continue;
    const base = `${c.kind} ${c.name}`;
    const n = (seen.get(base) ?? 0) + 1;
    seen.set(base, n);
    const runs = c.exec ? `${[c.exec.command, ...c.exec.args].join(" ")}${c.exec.env.length ? `  (env: ${c.exec.env.join(", ")})` : ""}` : `connects to ${c.url}`;
    out.push({ key: n === 1 ? base : `${base} #${n}`, kind: c.kind, name: c.name, runs });
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
    else if (prev.runs !== e.runs) changed.push({ before: prev, after: e });
    old.delete(e.key);
  }
  return { added, changed, removed: [...old.values()] };
}

/** True when the change adds or alters something that runs (removals need no consent). */
export function needsConsent(changes: ExecutableChanges): boolean {
  return changes.added.length > 0 || changes.changed.length > 0;
}

/** The lines that show a change, for a terminal or an error message. */
export function describeExecutableChanges(changes: ExecutableChanges): string[] {
  return [
    ...changes.added.map((e) => `+ ${e.kind} ${e.name}: ${e.runs}`),
    ...changes.changed.flatMap(({ before, after }) => [`~ ${after.kind} ${after.name}: ${after.runs}`, `    was: ${before.runs}`]),
    ...changes.removed.map((e) => `- ${e.kind} ${e.name}: ${e.runs}`),
  ];
}
