/**
 * What the team-set engine needs of this one (docs/design/team-sets.md (c), (d) 6.): npm plugins
 * installed into the user's tree at the exact versions a team lock names, their bytes checked
 * against the lock's integrity before anything is installed, in one transaction that the caller
 * can add its own staged files to (the generated host files, the lock), so the whole restore
 * commits at once.
 */
import { applyPlan, type ApplyResult } from "./apply.js";
import type { MutationWorld, Mutation } from "./mutation.js";
import { loadArborist, loadPacote, npmError, npmOptions, type NpmClientOptions } from "./npm-client.js";
import { pluginsPaths } from "./state.js";
import type { XcshRoots } from "../core/paths.js";
import { planInstall } from "./plan.js";
import { resolveSpec, type ResolvedPackage } from "./resolve.js";
import { parseInstallSpec } from "./spec.js";
import type { ExecutableRequest } from "../components/consent.js";

/** An npm plugin as a team lock pins it. */
export interface PinnedNpmPlugin {
  name: string;
  version: string;
  integrity: string;
  from?: { kind: "git"; url: string; commit: string } | { kind: "tarball"; url: string };
}

/** A pinned plugin resolved now, and the integrity its source offers now (compared by the caller, who names the lock field). */
export interface ResolvedPinned {
  pinned: PinnedNpmPlugin;
  resolved: ResolvedPackage;
  /** The integrity of the bytes the source offers now (`undefined`: it gave none). */
  integrity: string | undefined;
  /** The feature names the package's manifest offers (for `features: "*"`). */
  features: string[];
}

/**
 * The install spec of exactly the pinned bytes: the version from the registry, the commit from
 * git, the tarball URL (git and tarball specs as the user would type them: the installer names
 * them by their manifest).
 */
function pinnedSpec(p: PinnedNpmPlugin): string {
  if (p.from?.kind === "git") return `git+${p.from.url}#${p.from.commit}`;
  if (p.from?.kind === "tarball") return p.from.url;
  return `${p.name}@${p.version}`;
}

/**
 * The integrity of the bytes `spec` installs: the registry's for registry packages (`known`),
 * else that of the tarball pacote packs (a git commit gives no integrity of its own; its packed
 * tarball is what a lock can compare).
 */
export async function packedIntegrity(client: NpmClientOptions, cwd: string, spec: string, known: string | undefined): Promise<string | undefined> {
  if (known) return known;
  const pacote = await loadPacote();
  try {
    // pacote packs a git checkout with arborist (its prepare step); no scripts run (`ignoreScripts` unless allowed).
    const data = (await pacote.tarball(spec, { ...npmOptions(client), Arborist: await loadArborist(), where: cwd } as never)) as unknown as { integrity?: string };
    return data.integrity;
  } catch (error) {
    throw npmError(error, spec, client);
  }
}

/** Resolve pinned plugins (manifest and bytes into npm's cache; nothing of ours written). */
export async function resolvePinned(client: NpmClientOptions, cwd: string, pinned: readonly PinnedNpmPlugin[]): Promise<ResolvedPinned[]> {
  return Promise.all(
    pinned.map(async (p) => {
      const spec = pinnedSpec(p);
      const resolved = await resolveSpec(parseInstallSpec(spec, cwd), client, cwd);
      return { pinned: p, resolved, integrity: await packedIntegrity(client, cwd, spec, resolved.integrity), features: Object.keys(resolved.manifest.features ?? {}) };
    }),
  );
}

/**
 * Install the resolved pinned plugins (an installed one at the same version is a NOOP; features
 * stay the user's: a team's go to the project's overrides) in one transaction, with
 * `stageMore` staging the caller's files in it before the commit.
 */
export function applyPinned(
  world: MutationWorld,
  label: string,
  options: { client: NpmClientOptions; cwd: string; resolved: readonly ResolvedPinned[]; approveExecutables?: (request: ExecutableRequest) => Promise<void>; stageMore: (m: Mutation) => Promise<void> },
): Promise<ApplyResult> {
  const packages = options.resolved.map((r) => ({ ...r.resolved, spec: { ...r.resolved.spec, features: null } }));
  return applyPlan(world, label, {
    client: options.client,
    cwd: options.cwd,
    replan: (inventory) => planInstall(inventory, packages),
    stageMore: options.stageMore,
    ...(options.approveExecutables ? { approveExecutables: options.approveExecutables } : {}),
  });
}

/** The parts of an arborist node the closure walk reads (the package ships no types for them). */
interface ClosureNode {
  packageName: string;
  version: string;
  integrity?: string | null;
  edgesOut: Map<string, { to: ClosureNode | null; peer: boolean }>;
}

/**
 * What each installed plugin of `names` pulls in from the user's tree now, layout-free
 * (`name@version → integrity`, as a team lock records it); a plugin not installed is absent.
 */
export async function installedClosures(roots: XcshRoots, client: NpmClientOptions, names: readonly string[]): Promise<Map<string, Record<string, string>>> {
  const out = new Map<string, Record<string, string>>();
  if (names.length === 0) return out;
  const Arborist = await loadArborist();
  const tree = await new Arborist({ ...npmOptions(client), path: pluginsPaths(roots).plugins }).loadActual();
  for (const name of names) {
    const top = tree.children.get(name) as unknown as ClosureNode | undefined;
    if (!top) continue;
    const closure: Record<string, string> = {};
    const seen = new Set<ClosureNode>([top]);
    const walk = (node: ClosureNode) => {
      for (const edge of node.edgesOut.values()) {
        const to = edge.to;
        if (!to || seen.has(to)) continue;
        seen.add(to);
        Object.defineProperty(closure, `${to.packageName}@${to.version}`, { value: to.integrity ?? "", enumerable: true, writable: true, configurable: true });
        walk(to);
      }
    };
    walk(top);
    out.set(name, closure);
  }
  return out;
}

export type { ApplyResult } from "./apply.js";
