/**
 * Doctor's checks of xcsh-tools' own machinery: our settings (each value with its origin; a
 * malformed file is a failed check, never a crash), the journal (an interrupted transaction) and
 * the cross-process lock (who holds it, since when, whether that process is alive).
 *
 * These run first and read without the lock: doctor without `--fix` writes nothing, not even
 * the recovery every other command runs before reading.
 */
import { readdir } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { lstatOrUndefined } from "../core/atomic-fs.js";
import { loadSettings, type LoadedSettings } from "../core/config.js";
import { SETTING_KEYS } from "../core/settings-keys.js";
import { errorMessage, isXcshToolsError, nodeErrorCode } from "../core/errors.js";
import { journalRoot } from "../core/journal.js";
import { isPidAlive, lockFilePath, readLockOwner, type LockOwner } from "../core/lock.js";
import { xcshPaths } from "../core/paths.js";
import { readJsonOrUndefined } from "../manifest/json-file.js";
import { isRecord } from "../manifest/result.js";
import type { SettingRow } from "./types.js";
import { AreaFindings, type DoctorWorld } from "./world.js";

/** How to act on a settings warning, by code (the message names the file and field). */
const SETTINGS_WARNING_HINTS: Record<string, (source: string) => string> = {
  ECONFIG_SHADOWED: () => "Merge it into the file that wins, or delete it.",
  ECONFIG_UNTRUSTED_PROJECT: (source) => `If you know who wrote this project, trust it: \`xcsh-tools trust ${path.dirname(source)}\`.`,
  ECONFIG_PROJECT_SECRET: (source) => `Remove the key from ${source}; set it in ~/.xcsh/xcsh-tools.json, its XCSH_TOOLS_* variable or on the command line instead.`,
};

/** Our settings, layered, and one check for the files they came from. */
export async function checkSettings(world: DoctorWorld): Promise<{ area: AreaFindings; rows: SettingRow[]; loaded: LoadedSettings | undefined }> {
  const area = new AreaFindings("settings");
  let loaded: LoadedSettings;
  try {
    loaded = await loadSettings({
      cwd: world.cwd,
      xcshHome: world.roots.xcshHome,
      env: world.env,
      ...(world.settingsFlags ? { flags: world.settingsFlags } : {}),
      ...(world.stopDir ? { stopDir: world.stopDir } : {}),
      projectTrusted: world.projectTrusted === true,
      home: world.roots.home,
    });
  } catch (error) {
    if (!isXcshToolsError(error)) throw error;
    const where = [error.file, error.path ? `field "${error.path}"` : undefined].filter(Boolean).join(", ");
    area.problem("settings", "error", `${error.message}${where && !error.message.includes(error.file ?? "\0") ? ` (${where})` : ""}`, {
      hint: error.hint ?? "Fix the settings file.",
      manual: "doctor never rewrites your settings files; edit the file named above",
    });
    return { area, rows: [], loaded: undefined };
  }
  const files = [loaded.files.project ? `project ${loaded.files.project}` : undefined, loaded.files.user ? `user ${loaded.files.user}` : undefined].filter(Boolean);
  area.ok("settings", files.length > 0 ? `loaded from ${files.join(" and ")}` : "no settings files: flags, environment and defaults only");
  for (const warning of loaded.warnings) {
    area.problem(`settings:${warning.code}:${warning.source}:${warning.path}`, "warn", warning.message, {
      hint: SETTINGS_WARNING_HINTS[warning.code]?.(warning.source) ?? `Fix or remove the key in ${warning.source}.`,
      manual: "doctor never rewrites your settings files",
    });
  }
  const rows = SETTING_KEYS.map((key) => {
    const v = loaded.values[key];
    return { key, value: v.value ?? null, origin: v.origin, ...(v.via && v.origin === "env" ? { via: v.via } : {}) };
  });
  return { area, rows, loaded };
}

/** The lock file's holder and ages, as doctor reports it. */
export interface LockStatus {
  file: string;
  owner: LockOwner | undefined;
  /** ms since the holder took it (from the record), when known. */
  ageMs: number | undefined;
  /** ms since the last heartbeat (the file's mtime). */
  heartbeatMs: number;
  /** held by a process of this host that exists. */
  alive: boolean;
  /** held by a process of this host that is gone. */
  dead: boolean;
}

/** The lock's status, or undefined when nobody holds it. */
export async function readLockStatus(oursDir: string, now = Date.now()): Promise<LockStatus | undefined> {
  const file = lockFilePath(oursDir);
  const info = await lstatOrUndefined(file);
  if (!info) return undefined;
  const owner = await readLockOwner(oursDir).catch(() => undefined);
  const local = owner !== undefined && owner.hostname === os.hostname();
  const alive = local && (owner.pid === process.pid || isPidAlive(owner.pid));
  const created = owner ? Date.parse(owner.createdAt) : Number.NaN;
  return { file, owner, ageMs: Number.isNaN(created) ? undefined : Math.max(0, now - created), heartbeatMs: Math.max(0, now - info.mtimeMs), alive, dead: local && !alive };
}

function seconds(ms: number | undefined): string {
  return ms === undefined ? "an unknown time" : `${Math.round(ms / 1000)} s`;
}

/** One interrupted transaction, as far as its intent file tells. */
interface PendingEntry {
  name: string;
  label?: string;
  state?: string;
  pid?: number;
  createdAt?: string;
  leftover: boolean;
}

async function readPending(oursDir: string): Promise<PendingEntry[]> {
  let names: string[];
  try {
    names = (await readdir(journalRoot(oursDir))).sort();
  } catch (error) {
    if (nodeErrorCode(error) === "ENOENT" || nodeErrorCode(error) === "ENOTDIR") return [];
    throw error;
  }
  const out: PendingEntry[] = [];
  for (const name of names) {
    if (name.endsWith(".new") || name.endsWith(".done") || name.startsWith(".")) {
      out.push({ name, leftover: true });
      continue;
    }
    const entry: PendingEntry = { name, leftover: false };
    // Recovery itself reports an unreadable intent (EJOURNAL); here it is just "unknown".
    const intent = readJsonOrUndefined(path.join(journalRoot(oursDir), name, "intent.json"));
    if (isRecord(intent)) {
      if (typeof intent.label === "string") entry.label = intent.label;
      if (typeof intent.state === "string") entry.state = intent.state;
      if (typeof intent.pid === "number") entry.pid = intent.pid;
      if (typeof intent.createdAt === "string") entry.createdAt = intent.createdAt;
    }
    out.push(entry);
  }
  return out;
}

/** The journal and the lock. */
export async function checkTransactions(world: DoctorWorld): Promise<AreaFindings> {
  const area = new AreaFindings("transactions");
  const ours = xcshPaths(world.roots).ours;
  const lock = await readLockStatus(ours);

  const pending = await readPending(ours);
  const real = pending.filter((p) => !p.leftover);
  if (pending.length === 0) area.ok("journal", "no interrupted transaction");
  else if (lock?.alive) {
    area.problem("journal", "warn", `a transaction is in progress${real[0]?.label ? ` ("${real[0].label}")` : ""}, by pid ${lock.owner?.pid} which holds the lock`, {
      hint: "Wait for that command to finish, then run doctor again.",
      manual: `pid ${lock.owner?.pid} is still running`,
    });
  } else if (real.length === 0) {
    area.problem("journal", "warn", `leftovers of finished transactions in ${journalRoot(ours)} (${pending.map((p) => p.name).join(", ")})`, {
      hint: "Run `xcsh-tools doctor --fix` (or any command) to delete them.",
      repair: { kind: "recover-journal" },
      repairText: "delete the leftovers",
    });
  } else {
    const described = real
      .map((p) => `${p.label ? `"${p.label}"` : `transaction ${p.name}`}${p.pid ? ` (pid ${p.pid}` : " ("}${p.createdAt ? `${p.pid ? ", " : ""}started ${p.createdAt}` : ""}) ${p.state === "committing" ? "was committed but not completed: recovery completes it" : "was interrupted: recovery rolls it back"}`)
      .join("; ");
    area.problem("journal", "error", `interrupted transaction: ${described}${real.some((p) => p.state === "committing") ? "; until then the plugins folder may be half-changed" : ""}`, {
      hint: "Run `xcsh-tools doctor --fix` (any other command recovers it too, before it starts).",
      repair: { kind: "recover-journal" },
      repairText: "recover it the way every command does (roll back, or complete a committed one)",
    });
  }

  if (!lock) area.ok("lock", "not locked");
  else {
    const who = lock.owner ? `pid ${lock.owner.pid} on ${lock.owner.hostname}${lock.owner.label ? ` ("${lock.owner.label}")` : ""}` : "an unreadable record";
    const ages = `taken ${seconds(lock.ageMs)} ago, last heartbeat ${seconds(lock.heartbeatMs)} ago`;
    if (lock.dead) {
      area.problem("lock", "warn", `stale lock ${lock.file}: held by ${who}, which is no longer running (${ages}); the next command takes it over`, {
        hint: "Run `xcsh-tools doctor --fix` to remove it.",
        repair: { kind: "remove-dead-lock", pid: lock.owner!.pid },
        repairText: `remove the lock of dead pid ${lock.owner!.pid}`,
      });
    } else if (lock.alive) {
      area.problem("lock", "warn", `locked by ${who} (${ages}): a command is running`, {
        hint: "Wait for it to finish.",
        manual: `its holder, pid ${lock.owner!.pid}, is alive; doctor removes only a dead holder's lock`,
      });
    } else {
      area.problem("lock", "warn", `locked by ${who} (${ages}); doctor cannot tell whether that process is alive`, {
        hint: `If no xcsh-tools command is running${lock.owner ? ` on ${lock.owner.hostname}` : ""}, delete ${lock.file}.`,
        manual: "its holder is not a process of this host",
      });
    }
  }
  return area;
}

/** The message of an unexpected failure of a check, for a failed check instead of a crash. */
export function failedCheck(error: unknown): string {
  return isXcshToolsError(error) ? `${error.message}${error.code ? ` (${error.code})` : ""}` : errorMessage(error);
}
