/**
 * Install scripts run after consent. npm's installer runs lifecycle scripts while it installs;
 * every npm call of ours passes `ignoreScripts` (npm-client.ts), so nothing a package brings runs
 * while it is fetched, packed or installed. With `--allow-scripts` (settings `allowScripts`) the
 * applier lists what `reify` would have run — the packages it added or changed, as arborist's own
 * build step picks them (reify.js `[_build]`, rebuild.js `#buildQueues`) — puts that list in
 * front of the user with the plugin's hook and extension modules, and only after the answer runs
 * them with arborist's `rebuild({ nodes })`, in the staging copy, before validation.
 *
 * What cannot run after consent is never run: a git dependency's `prepare` (pacote would run it
 * while it fetches, in a clone) and a local folder's `prepare` (run by packing it).
 */
import { scriptsForbiddenBy } from "../core/policy.js";
import { XcshToolsError } from "../core/errors.js";
import { existsSync } from "node:fs";
import path from "node:path";
import type Arborist from "@npmcli/arborist";
import type { ArboristDiff, ArboristNode } from "@npmcli/arborist";
import { failOnFullDisk, loadArborist, loadPacote, npmError, npmOptions, type NpmClientOptions } from "./npm-client.js";

export type { InstallScript as PendingScript } from "../components/consent.js";
import type { InstallScript as PendingScript } from "../components/consent.js";

/** The events `rebuild` runs, in its order; `prepare` only for linked folders. */
const EVENTS = ["preinstall", "install", "postinstall"] as const;
/** npm's default for a package with a binding.gyp and no install script (@npmcli/node-gyp). */
const GYP_INSTALL = "node-gyp rebuild";

function scriptsField(pkg: Record<string, unknown>): Record<string, unknown> {
  return typeof pkg.scripts === "object" && pkg.scripts !== null ? (pkg.scripts as Record<string, unknown>) : {};
}

/** The lifecycle scripts a package.json declares for `events` (default: those a registry install runs). */
export function installScriptsOf(name: string, pkg: Record<string, unknown>, events: readonly string[] = EVENTS): PendingScript[] {
  const scripts = scriptsField(pkg);
  return events.flatMap((event) => (typeof scripts[event] === "string" && scripts[event] !== "" ? [{ pkg: name, event, command: scripts[event] as string }] : []));
}

/** The added or changed nodes whose scripts npm's reify would run, as its `[_build]` collects them (tip first). */
export function changedNodes(diff: ArboristDiff | null): ArboristNode[] {
  const nodes: ArboristNode[] = [];
  const walk = (d: ArboristDiff) => {
    for (const child of d.children) if (child.action === "ADD" || child.action === "CHANGE") walk(child);
    if (d.ideal && !d.ideal.isProjectRoot && (d.action === "ADD" || d.action === "CHANGE")) nodes.push(d.ideal);
  };
  if (diff) walk(diff);
  // Unlike reify, links that did not change are left out: a command runs the scripts of what it adds or changes, nothing else.
  return nodes;
}

/** The scripts one node (and the bundled packages inside it, which rebuild builds too) runs. */
function scriptsOf(node: ArboristNode, out: PendingScript[], seen: Set<ArboristNode>): void {
  if (seen.has(node)) return;
  seen.add(node);
  const pkg = node.target.package;
  const name = typeof pkg.name === "string" ? pkg.name : node.name;
  out.push(...installScriptsOf(name, pkg, node.isLink ? ["preinstall", "prepare", "install", "postinstall"] : EVENTS));
  const scripts = scriptsField(pkg);
  if (pkg.gypfile !== false && !scripts.install && !scripts.preinstall && existsSync(path.join(node.target.path, "binding.gyp"))) out.push({ pkg: name, event: "install", command: GYP_INSTALL });
  for (const child of node.children.values()) if (child.inBundle) scriptsOf(child, out, seen);
}

/**
 * The scripts `rebuild(nodes)` will run, by the plugin that brings them: a package reached from
 * a plugin's dependencies counts for the first plugin that reaches it (`plugins` in plan order);
 * one no plugin reaches counts for the first.
 */
export function scriptsByPlugin(nodes: readonly ArboristNode[], plugins: readonly ArboristNode[]): Map<string, PendingScript[]> {
  const pending = new Set(nodes);
  const byPlugin = new Map<string, PendingScript[]>();
  const claimed = new Set<ArboristNode>();
  for (const plugin of plugins) {
    const out: PendingScript[] = [];
    const stack = [plugin];
    const visited = new Set<ArboristNode>();
    while (stack.length > 0) {
      const node = stack.pop()!;
      if (visited.has(node)) continue;
      visited.add(node);
      if (pending.has(node) && !claimed.has(node)) {
        claimed.add(node);
        scriptsOf(node, out, new Set());
      }
      for (const edge of node.target.edgesOut.values()) if (edge.to) stack.push(edge.to);
    }
    byPlugin.set(plugin.name, out);
  }
  const rest: PendingScript[] = [];
  for (const node of nodes) if (!claimed.has(node)) scriptsOf(node, rest, new Set());
  if (rest.length > 0 && plugins[0]) byPlugin.get(plugins[0].name)!.push(...rest);
  return byPlugin;
}

/** Run the lifecycle scripts of `nodes` in the staging copy `dir` (bins are linked already). */
export async function runInstallScripts(nodes: readonly ArboristNode[], dir: string, client: NpmClientOptions, what: string): Promise<void> {
  if (nodes.length === 0) return;
  // A library caller passing allowScripts past the CLI meets the policy here (the CLI never asks then).
  const forbidden = scriptsForbiddenBy();
  if (forbidden) throw new XcshToolsError("EPOLICY_FORBIDDEN", `Install scripts of ${what} were not run: ${forbidden}`, { hint: "Install without --allow-scripts; the policy's administrator decides whether scripts may run here." });
  const Arborist: typeof import("@npmcli/arborist").default = await loadArborist();
  const arb: Arborist = new Arborist({ ...npmOptions(client), ignoreScripts: false, binLinks: false, path: dir });
  try {
    await failOnFullDisk(dir, what, () => arb.rebuild({ nodes }));
  } catch (error) {
    throw npmError(error, what, client);
  }
}

/** The install scripts of one registry version, read from its manifest (a dry run of `update` names them; nothing runs). */
export async function registryInstallScripts(name: string, version: string, client: NpmClientOptions): Promise<PendingScript[]> {
  const pacote = await loadPacote();
  try {
    return installScriptsOf(name, (await pacote.manifest(`${name}@${version}`, npmOptions(client) as never)) as unknown as Record<string, unknown>);
  } catch (error) {
    throw npmError(error, `${name}@${version}`, client, name);
  }
}
