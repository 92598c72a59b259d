/**
 * `<project>/.xcsh/plugin-overrides.json`: a project's overrides of npm plugin state
 * — `disabled`, `features[name]`, `settings[name]`. The host reads this
 * file and has no writer for it; `enable/disable/features/config --scope project` write
 * it here.
 *
 * Like every shared file it is kept whole: unknown keys and key order survive our rewrites, and a
 * file that is not JSON or has the wrong shape is a coded error, never treated as empty. Writes go
 * through the mutation's journal transaction (staged, swapped in at commit), so a project change
 * and a runtime-lock change made by one command land together or not at all.
 *
 * Only `<cwd>/.xcsh/` is written. The host's loader reads `.xcsh/`, else `.codex/`, else
 * `.gemini/` `plugin-overrides.json` (extensibility/plugins/loader.ts:33-43), so without a
 * `.xcsh/` file the project's overrides are the other agent's file: we read it (`readFrom`), and
 * a change writes `.xcsh/plugin-overrides.json` holding that file's content plus the change —
 * which the host then reads first, so nothing the other file said is lost.
 */
import { existsSync } from "node:fs";
import { chmod, writeFile } from "node:fs/promises";
import { jsonText, lstatOrUndefined } from "../core/atomic-fs.js";
import { untrustedProjectError } from "../core/trust.js";
import type { Transaction } from "../core/journal.js";
import { effectiveOverridesFile, projectPaths } from "../core/paths.js";
import { readCheckedJson } from "../manifest/json-file.js";
import { validatePluginOverrides, type PluginOverrides } from "../manifest/plugin-overrides.js";

/** The overrides as we hold them: the host's shape plus whatever else is in the file. */
export type OverridesFile = PluginOverrides & Record<string, unknown>;

/** A project's overrides file: where it is and what it holds (`undefined`: no file, or not loaded). */
export interface ProjectOverrides {
  /** Where changes are written: `<cwd>/.xcsh/plugin-overrides.json`. */
  file: string;
  /** The file `value` was read from when it is not `file` (`.codex/` or `.gemini/`'s). */
  readFrom?: string;
  value: OverridesFile | undefined;
  /** The project is not trusted: the file was not read (`present`: it exists). */
  untrusted?: { present: boolean };
}

/**
 * Read `<cwd>/.xcsh/plugin-overrides.json` strictly: a file that is not JSON or has the wrong
 * shape is `ESTATE_FILE` naming it (as for the runtime lock), never "no overrides".
 *
 * The npm plugin engine's trust seam: in a project the user does not trust the file is not read
 * at all (a project could otherwise switch on plugins the user disabled, or pick their features
 * and settings); the result says so, and a project-scope change refuses (`EUNTRUSTED_PROJECT`).
 */
export async function readProjectOverrides(cwd: string, options: { trusted: boolean }): Promise<ProjectOverrides> {
  const file = projectPaths(cwd).pluginOverrides;
  const from = effectiveOverridesFile(cwd);
  if (!options.trusted) return { file, value: undefined, untrusted: { present: [file, ...projectPaths(cwd).otherPluginOverrides].some((f) => existsSync(f)) } };
  const value = await readCheckedJson(from, validatePluginOverrides, { code: "ESTATE_FILE", hint: "Fix or move the file away; nothing was changed." });
  return { file, ...(from !== file ? { readFrom: from } : {}), value };
}

function ownKey<T>(record: Record<string, T> | undefined, key: string): T | undefined {
  return record !== undefined && Object.hasOwn(record, key) ? record[key] : undefined;
}

export function isProjectDisabled(overrides: PluginOverrides | undefined, name: string): boolean {
  return overrides?.disabled?.includes(name) ?? false;
}

export function projectFeatures(overrides: PluginOverrides | undefined, name: string): string[] | undefined {
  return ownKey(overrides?.features, name);
}

export function projectSettings(overrides: PluginOverrides | undefined, name: string): Record<string, unknown> | undefined {
  return ownKey(overrides?.settings, name);
}

/** `base` with `key` set to `value`, or without `key` when `value` is empty (our edits leave no empty sections). */
function withSection(base: OverridesFile, key: "disabled" | "features" | "settings", value: unknown[] | Record<string, unknown>): OverridesFile {
  const empty = Array.isArray(value) ? value.length === 0 : Object.keys(value).length === 0;
  if (!empty) return { ...base, [key]: value };
  const next = { ...base };
  delete next[key];
  return next;
}

/** The overrides with `name` added to or removed from `disabled`. */
export function withProjectDisabled(overrides: OverridesFile | undefined, name: string, disabled: boolean): OverridesFile {
  const base: OverridesFile = overrides ?? {};
  const list = (base.disabled ?? []).filter((n) => n !== name);
  if (disabled) list.push(name);
  return withSection(base, "disabled", list);
}

/** The overrides with `name`'s feature list set (`undefined` removes it: the user's state applies). */
export function withProjectFeatures(overrides: OverridesFile | undefined, name: string, features: string[] | undefined): OverridesFile {
  const base: OverridesFile = overrides ?? {};
  const all = { ...(base.features ?? {}) };
  if (features === undefined) delete all[name];
  else all[name] = features;
  return withSection(base, "features", all);
}

/** The overrides with `name`'s settings replaced (an empty object removes the section). */
export function withProjectSettings(overrides: OverridesFile | undefined, name: string, values: Record<string, unknown>): OverridesFile {
  const base: OverridesFile = overrides ?? {};
  const all = { ...(base.settings ?? {}) };
  if (Object.keys(values).length === 0) delete all[name];
  else all[name] = values;
  return withSection(base, "settings", all);
}

export function overridesChanged(before: OverridesFile | undefined, after: OverridesFile | undefined): boolean {
  if (after === undefined) return false;
  return before === undefined || jsonText(before) !== jsonText(after);
}

/**
 * Stage the new overrides file in `tx` when it changes; returns whether it did. The file keeps
 * its mode (a user who made it owner-only keeps it so); a new one is 0644, like the project's files.
 */
export async function stageOverridesWrite(tx: Transaction, file: string, before: OverridesFile | undefined, after: OverridesFile | undefined): Promise<boolean> {
  if (!overridesChanged(before, after)) return false;
  const existing = await lstatOrUndefined(file);
  const mode = existing?.isFile() ? existing.mode & 0o777 : 0o644;
  const slot = await tx.stage(file);
  await writeFile(slot, jsonText(after), { mode });
  await chmod(slot, mode);
  return true;
}

/** `EUNTRUSTED_PROJECT` when `overrides` were left unread: a project-scope change needs a trusted project. */
export function assertOverridesWritable(overrides: ProjectOverrides, cwdOf: string, doing: string): void {
  if (overrides.untrusted) throw untrustedProjectError(cwdOf, doing);
}
