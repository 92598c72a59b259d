/**
 * What a team restore's pinned npm install would do, known before it does anything: which plugins
 * it adds or changes, what their hook and extension modules run (for the one question a restore
 * asks, and for `--dry-run`), and which secret settings still have no value here. Nothing of the
 * user's is written and no plugin code runs: tarballs are extracted into the caller's scratch and
 * read.
 */
import path from "node:path";
import { hasChanges, npmExecutableChanges, type ExecutableRequest } from "../components/consent.js";
import { manifestKeyOf } from "./apply.js";
import { loadInventory } from "./inventory.js";
import { readStateForQuery, type MutationWorld } from "./mutation.js";
import { loadArborist, loadPacote, npmError, npmOptions, type NpmClientOptions } from "./npm-client.js";
import { planInstall } from "./plan.js";
import { resolveSetting } from "./plugin-settings.js";
import { pluginSettings, pluginsPaths } from "./state.js";
import { settledAll, type ResolvedPinned } from "./team.js";
import { readJsonOrUndefined } from "../manifest/json-file.js";

/** A secret setting of a declared plugin that has no value on this machine. */
export interface SecretNeeded {
  plugin: string;
  key: string;
  /** The environment variable the schema offers instead, when it names one. */
  env?: string;
}

/**
 * The pinned plugins an install would add or change (`ADD`/`CHANGE` of the plugins
 * engine's plan against this user's tree), and what their hook and extension modules would run:
 * each tarball is extracted into scratch and read, never imported, so a dry run and the one
 * question of a restore can list them before anything is installed.
 */
export async function previewPinned(mworld: MutationWorld, client: NpmClientOptions, npmReady: readonly ResolvedPinned[], scratch: string): Promise<{ changing: string[]; requests: ExecutableRequest[] }> {
  if (npmReady.length === 0) return { changing: [], requests: [] };
  const inventory = await loadInventory(await readStateForQuery(mworld));
  // As applyPinned plans it: the set's features go to the project's overrides, not to the user's runtime lock.
  const plan = planInstall(inventory, npmReady.map((r) => ({ ...r.resolved, spec: { ...r.resolved.spec, features: null } })));
  const liveModules = pluginsPaths(mworld.roots).nodeModules;
  const pacote = await loadPacote();
  // Every tarball at once (they were sequential: one restore waited for each in turn), asked about in the plan's order.
  // None outlives another's failure: they unpack into the caller's scratch (team.ts `settledAll`).
  const asked = await settledAll(plan.actions.map(async (action, index): Promise<ExecutableRequest | undefined> => {
    if (action.apply.kind !== "install") return undefined;
    const r = npmReady.find((x) => x.pinned.name === action.name)!;
    const dir = await unpackedTop(pacote, client, r, path.join(scratch, `npm-${index}`));
    const current = inventory.find((p) => p.name === action.name && p.manifest !== undefined);
    const next = { dir, manifest: r.resolved.manifest, manifestKey: manifestKeyOf(readJsonOrUndefined(path.join(dir, "package.json"))) };
    const changes = npmExecutableChanges(current?.manifest ? { dir: current.dir, manifest: current.manifest, manifestKey: manifestKeyOf(current.pkg) } : undefined, next, path.join(liveModules, action.name));
    // Its own install scripts run only with --allow-scripts; a dependency's are asked about by the applier, which sees them.
    const scripts = client.allowScripts ? r.resolved.installScripts : [];
    return hasChanges(changes) || scripts.length > 0 ? { id: action.name, version: r.pinned.version, source: "npm", scope: "user", update: current !== undefined, dryRun: false, changes, ...(scripts.length > 0 ? { scripts } : {}) } : undefined;
  }));
  const requests = asked.filter((request) => request !== undefined);
  return { changing: plan.actions.filter((a) => a.type !== "NOOP").map((a) => `${a.name}@${a.to?.version ?? "?"}`), requests };
}

/**
 * The folder holding the plugin's locked bytes: where resolvePinned unpacked them when it read
 * its manifest (read once, not twice), else (a git plugin, read from its checkout) packed and
 * unpacked into `dir` now.
 */
async function unpackedTop(pacote: Awaited<ReturnType<typeof loadPacote>>, client: NpmClientOptions, r: ResolvedPinned, dir: string): Promise<string> {
  if (r.top.dir !== undefined) return r.top.dir;
  try {
    // By the URL and integrity the restore fetched (plugins/team.ts): npm's cache answers, no packument.
    // A git plugin is packed by pacote with arborist (no scripts: npmOptions' ignoreScripts), as packedIntegrity packs it.
    await pacote.extract(r.top.resolved, dir, { ...npmOptions(client), Arborist: await loadArborist(), ...(r.integrity ? { integrity: r.integrity } : {}) } as never);
  } catch (error) {
    throw npmError(error, r.resolved.spec.npmSpec, client);
  }
  return dir;
}

/** The secret settings of the set's npm plugins that have no value for this user (stored or from their env variable). */
export async function secretsNeededOf(mworld: MutationWorld, npmReady: readonly ResolvedPinned[]): Promise<SecretNeeded[]> {
  const withSecrets = npmReady.filter((r) => Object.values(r.resolved.manifest.settings ?? {}).some((s) => s.secret === true));
  if (withSecrets.length === 0) return [];
  const lock = (await readStateForQuery(mworld)).runtimeLock;
  const out: SecretNeeded[] = [];
  for (const r of withSecrets) {
    const stored = { user: pluginSettings(lock, r.pinned.name) };
    for (const [key, schema] of Object.entries(r.resolved.manifest.settings ?? {})) {
      if (schema.secret !== true || resolveSetting(key, schema, stored, mworld.env).origin !== "unset") continue;
      out.push({ plugin: r.pinned.name, key, ...(schema.env !== undefined ? { env: schema.env } : {}) });
    }
  }
  return out;
}

