/**
 * One view: building it (scan, fingerprint what the scan read, scan again) and checking it
 * (every input unchanged, every path inside a folder discovery reads). Discovery and the input
 * rules load only when a question must be scanned: a fresh boot only stats.
 */
import { readdirSync, type Dirent } from "node:fs";
import path from "node:path";
import { insideAnyOf, isRealPathInside } from "../core/contain.js";
import { projectPaths, resolveUserPath } from "../core/paths.js";
import type { ProviderId } from "../core/host-options.js";
import type { ToolLoadError, UntrustedProjectReport } from "../core/contract.js";
import { readFileBounded } from "../core/bounded-read.js";
import { MAX_JSON_FILE_BYTES } from "../manifest/json-file.js";
import { captureFingerprints, currentSignature, firstChange, hashBytes, inputKey, signaturesNow } from "./fingerprint.js";
import type { BootView, ViewKey } from "./format.js";
import type { World } from "./world.js";

/** Discovery (its providers and their validators), when a question must be scanned. */
export const discovery = () => import("../discovery/index.js");
/** What a scan read. */
export const inputsModule = () => import("./inputs.js");

/** Why `view` is stale, or undefined when every input is unchanged (`regular`: fingerprint.ts `firstChange`). */
export async function viewChange(view: BootView, regular?: Set<string>): Promise<string | undefined> {
  return firstChange(view.inputs, regular);
}

/**
 * Why a view names a tool path no scan could have produced, or undefined. The host imports a
 * fresh view's paths as they are, and the index is a file in the user's folder that anything may
 * have edited: a path outside every folder discovery reads (the xcsh root, the Claude Code and
 * Codex tools and plugin folders, a trusted project's tools folders, the configured paths) makes the
 * view stale, so the answer comes from a scan instead. Lexical first (no file system call at a
 * fresh boot); real paths only for a path that fails it.
 */
export function viewPathOutside(world: World, key: ViewKey, view: BootView): string | undefined {
  const project = projectPaths(key.cwd);
  const roots = [
    world.paths.root,
    // Outside the root when the host's folders are moved (XDG data folder, PI_CODING_AGENT_DIR).
    world.paths.plugins,
    world.paths.userTools,
    path.join(world.paths.claudeRoot, "tools"),
    path.join(world.paths.claudeRoot, "plugins"),
    path.join(world.paths.codexRoot, "tools"),
    // The plugin seeds the question names (the key holds them: another seed list is another view).
    ...(key.seeds ?? []),
    // A project's own tools folders only for a question asked in a trusted project: an untrusted
    // scan never lists them, so a view that does was not written by one (a view is not a trust
    // decision; trust was decided again for `key`).
    ...(key.trusted ? [project.tools, project.claudeTools, project.codexTools] : []),
    ...key.configuredPaths.map((p) => resolveUserPath(p, key.cwd, world.roots.home)),
  ];
  const lexicallyInside = insideAnyOf(roots);
  for (const found of view.paths) {
    if (typeof found?.path !== "string" || !path.isAbsolute(found.path)) return "the boot index names a tool path that is not absolute";
    if (lexicallyInside(found.path)) continue;
    if (roots.some((root) => isRealPathInside(found.path, root))) continue;
    return `the boot index names ${found.path}, outside every folder discovery reads`;
  }
  return undefined;
}

export function answerOf(result: { paths: BootView["paths"]; errors: ToolLoadError[]; untrusted?: UntrustedProjectReport }): string {
  return JSON.stringify({ paths: result.paths, errors: result.errors, untrusted: result.untrusted });
}

/** `inputs` and, as plain `stat` inputs, the folders of the files among them (once each). */
function withFolders(inputs: BootView["inputs"]): Pick<BootView["inputs"][number], "path" | "kind">[] {
  const known = new Set(inputs.map((input) => inputKey(input)));
  const out: Pick<BootView["inputs"][number], "path" | "kind">[] = [...inputs];
  for (const input of inputs) {
    const folder = { path: path.dirname(input.path), kind: "stat" as const };
    const key = inputKey(folder);
    if (known.has(key)) continue;
    known.add(key);
    out.push(folder);
  }
  return out;
}

/** At most this many entries are stat'ed below the folders a mutation added (`addedInputs`). */
const MAX_ADDED_ENTRIES = 256;

/**
 * `lstat` and `stat` inputs of each folder in `added` and `stat` inputs of the entries below it,
 * walked through a link as discovery reads it: a plugin folder a mutation just added (a `link`,
 * an install) holds every input of that plugin (its package.json, its tool files and their
 * folders), none of which the previous view had. Stat'ed before the scan like the previous
 * view's inputs, they spare the second scan when none moved during it (issue 44). Bounded:
 * `node_modules` and `.git` are not entered, links below are not followed, at most
 * MAX_ADDED_ENTRIES entries; an input left out has no signature from before, and is scanned twice.
 */
function addedInputs(added: readonly string[]): Pick<BootView["inputs"][number], "path" | "kind">[] {
  const out: Pick<BootView["inputs"][number], "path" | "kind">[] = [];
  const folders: string[] = [];
  for (const folder of added) {
    out.push({ path: folder, kind: "lstat" }, { path: folder, kind: "stat" });
    folders.push(folder);
  }
  while (folders.length > 0 && out.length < MAX_ADDED_ENTRIES) {
    const folder = folders.shift()!;
    let entries: Dirent[];
    try {
      entries = readdirSync(folder, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      if (out.length >= MAX_ADDED_ENTRIES) break;
      const file = path.join(folder, entry.name);
      out.push({ path: file, kind: "stat" });
      if (entry.isDirectory() && entry.name !== "node_modules" && entry.name !== ".git") folders.push(file);
    }
  }
  return out;
}

/**
 * Scan for `key`, fingerprint what the scan read, scan again. The first scan is the answer; the
 * view is only `consistent` (safe to store) when the second scan, made after the fingerprints
 * were taken, gives the same answer. `previous`: the stored view of the same key, whose hashes of
 * inputs with an unchanged signature are kept (`captureFingerprints`), and whose inputs, stat'ed
 * before the scan, spare the second scan when none moved during it. `added`: folders the change
 * before this scan added (`addedInputs`), whose inputs are stat'ed before it too.
 */
export async function scanView(world: World, key: ViewKey, previous?: BootView, added: readonly string[] = []): Promise<{ view: BootView; consistent: boolean }> {
  const discoverOptions = { ...world.roots, env: {}, providers: key.providers as ProviderId[], projectTrust: key.trusted };
  // The previous view's inputs as they are before the scan reads anything, and the folders that
  // hold them: the one input a plugin enabled or a feature turned on brings is the folder of its
  // tool files, which were inputs already (every entry a manifest declares is: inputs.ts), so
  // with it stat'ed here too such a change is scanned once (issue 44). Any other new input still
  // has no signature from before, and is scanned twice.
  const before = previous ? signaturesNow([...withFolders(previous.inputs), ...addedInputs(added)]) : undefined;
  const first = await (await discovery()).discoverToolPaths(key.configuredPaths, key.cwd, discoverOptions);
  const requests = await (await inputsModule()).collectInputs({ cwd: key.cwd, home: world.roots.home, paths: world.paths, configuredPaths: key.configuredPaths, trusted: key.trusted }, first);
  const inputs = await captureFingerprints(requests, previous?.inputs);
  const view: BootView = { key, builtAt: new Date().toISOString(), inputs, paths: first.paths, errors: first.errors, ...(first.untrusted ? { untrusted: first.untrusted } : {}) };
  // Every input the answer depends on had, before the scan, the signature taken after it: nothing
  // moved while the scan read it, which is what the second scan would show (a change after the
  // fingerprints is the next fresh check's to see). An input new to this view (a plugin enabled)
  // has no signature from before (unless it is below a folder in `added`): scan again.
  if (before && inputs.every((input) => before.get(inputKey(input)) === input.sig)) return { view, consistent: true };
  const second = await (await discovery()).discoverToolPaths(key.configuredPaths, key.cwd, discoverOptions);
  return { view, consistent: answerOf(first) === answerOf(second) };
}

/**
 * `previous` as it stands after a change of the runtime lock that discovery cannot see (a setting
 * set or deleted), or undefined when a scan must answer. `lockBefore`: the lock's bytes before the
 * change, read under the plugins lock. The view keeps its answer only when it was built from
 * exactly those bytes (its recorded hash), every other input has the signature it recorded (the
 * rule of a fresh check), and the lock now reads, for discovery, as it did
 * (discovery/providers/npm.ts `runtimeLockReading`: the same envelope, the same `plugins`, the same
 * records); the lock's fingerprint is then taken of the bytes that were compared. Anything else,
 * the lock moving while it is read included, is a scan's to answer.
 */
export async function keptAfterLockChange(world: World, previous: BootView, lockBefore: Uint8Array): Promise<BootView | undefined> {
  const file = world.paths.runtimeLock;
  const lockInput = previous.inputs.find((input) => input.path === file && input.kind === "stat");
  if (lockInput?.sha === undefined || lockBefore.length > MAX_JSON_FILE_BYTES || (await hashBytes(lockBefore)) !== lockInput.sha) return undefined;
  // The lock first: a change discovery reads (disable, features) stops here, before the other inputs are stat'ed.
  const sig = currentSignature(file);
  let bytes: Buffer | undefined;
  try {
    bytes = readFileBounded(file, { maxBytes: MAX_JSON_FILE_BYTES });
  } catch {
    return undefined;
  }
  if (bytes === undefined || !sig.startsWith("f:") || currentSignature(file) !== sig) return undefined;
  const { runtimeLockReading } = await discovery();
  if ((await runtimeLockReading(Buffer.from(lockBefore).toString("utf8"), file)) !== (await runtimeLockReading(bytes.toString("utf8"), file))) return undefined;
  const others = previous.inputs.filter((input) => input !== lockInput);
  const now = signaturesNow(others);
  if (others.some((input) => now.get(inputKey(input)) !== input.sig)) return undefined;
  const sha = await hashBytes(bytes);
  const inputs = previous.inputs.map((input) => (input === lockInput ? { ...input, sig, sha } : input));
  return { ...previous, builtAt: new Date().toISOString(), inputs };
}
