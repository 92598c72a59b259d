/**
 * The "host parity" area of `doctor`: state that works with xcsh-tools but that the xcsh host
 * reads differently (validate/host-differences.ts holds the codes and the host behaviour each
 * names). Warnings only: xcsh-tools keeps its behaviour on purpose, and `--fix` changes nothing
 * here. Project files are read only in a trusted project, as everywhere else.
 */
import path from "node:path";
import { readTextBounded } from "../core/bounded-read.js";
import { confinePath, isPathBelow } from "../core/contain.js";
import { effectiveOverridesFile, projectPaths, projectRegistryFile, xcshPaths } from "../core/paths.js";
import { nodeErrorCode } from "../core/errors.js";
import { placeOf } from "../core/state-places.js";
import { readInstalledRegistry, type RegistryEntry } from "../discovery/providers/marketplace-registry.js";
import type { DiscoverySink } from "../discovery/types.js";
import { listManifestEntries } from "../manifest/plugin-manifest.js";
import type { InstalledPlugin } from "../plugins/inventory.js";
import {
  HOST_DIFFERENCES,
  USER_CONFIG_HINT,
  describeStemCollision,
  describeUserConfigUse,
  filesOnlyTheHostLoads,
  folderWithoutIndex,
  hostToolFiles,
  stemCollisions,
  userConfigUse,
  type HostDifferenceCode,
} from "../validate/host-differences.js";
import { AreaFindings, type DoctorWorld } from "./world.js";

const MANUAL = "xcsh-tools keeps its behaviour on purpose; this says what the host does instead";

/** `parsed`: JSON parsed (as the host parses it: no BOM); `missing`; `bad`: the file is there and is not JSON. */
function jsonState(file: string): "parsed" | "missing" | "bad" {
  try {
    const text = readTextBounded(file);
    if (text === undefined) return "missing";
    JSON.parse(text);
    return "parsed";
  } catch (error) {
    return nodeErrorCode(error) === "ENOENT" || nodeErrorCode(error) === "ENOTDIR" ? "missing" : "bad";
  }
}

/** A sink that keeps nothing: the other areas report the registries' problems. */
const QUIET: DiscoverySink = { addPath() {}, addError() {}, addMetadata() {}, addIgnored() {}, addSkipped() {} };

/** Enabled entries of a registry, grouped by id; empty when missing or bad. */
async function registryEntries(file: string): Promise<Map<string, RegistryEntry[]>> {
  return (await readInstalledRegistry(file, { provider: "xcsh-plugins", providerName: "xcsh Marketplace", level: "user" }, QUIET)) ?? new Map();
}

/** Report one host difference as a warning keyed by `key`. */
type Warn = (code: HostDifferenceCode, key: string, message: string, hint: string) => void;

/** The host-parity findings. */
export async function checkHostParity(world: DoctorWorld, inventory: readonly InstalledPlugin[] | undefined): Promise<AreaFindings> {
  const area = new AreaFindings("host parity");
  const warn: Warn = (code, key, message, hint) => area.problem(`host:${code}:${key}`, "warn", `${code}: ${message}; ${HOST_DIFFERENCES[code]}`, { hint, manual: MANUAL });
  const paths = xcshPaths(world.roots);
  const trusted = world.projectTrusted === true;
  if (jsonState(paths.runtimeLock) === "bad") {
    warn("WHOST_LOCK_MALFORMED", paths.runtimeLock, `${paths.runtimeLock} is not valid JSON`, `Fix the file or move it away (xcsh-tools doctor --fix rebuilds it).`);
  }
  if (trusted) {
    const overrides = effectiveOverridesFile(world.cwd);
    if (jsonState(overrides) === "bad") warn("WHOST_OVERRIDES_MALFORMED", overrides, `${overrides} is not valid JSON`, `Fix ${overrides}.`);
  }
  checkNpmToolEntries(inventory ?? [], warn);
  const roots = await marketplaceToolRoots(world, trusted, warn);
  for (const root of roots) {
    const hostOnly = filesOnlyTheHostLoads(hostToolFiles(root.toolsDir));
    if (hostOnly.length === 0) continue;
    const shown = hostOnly.slice(0, 5).join(", ") + (hostOnly.length > 5 ? ` (and ${hostOnly.length - 5} more)` : "");
    warn("WHOST_TOOLS_FILES", `${root.id}:${root.toolsDir}`, `${root.id}: ${root.toolsDir} holds ${shown}`, `Ask the plugin's author to keep only tool modules in tools/.`);
  }
  for (const root of roots) {
    const userConfig = userConfigUse(root.dir);
    if (userConfig) warn("WHOST_USER_CONFIG", root.id, `${root.id} (${root.dir}) ${describeUserConfigUse(userConfig)}`, USER_CONFIG_HINT);
  }
  const projectTools = trusted ? projectPaths(world.cwd).tools : undefined;
  for (const collision of stemCollisions(roots, projectTools)) {
    warn("WHOST_TOOL_STEM", collision.stem, describeStemCollision(collision), `Rename or remove one of them, or uninstall a plugin you do not need.`);
  }
  checkXdgRegistry(area, world);
  if (area.healthy) area.ok("host", "nothing here that the host loads differently");
  return area;
}

/** npm plugins: a tools entry that is a folder without an index module. */
function checkNpmToolEntries(inventory: readonly InstalledPlugin[], warn: Warn): void {
  for (const plugin of inventory) {
    if (!plugin.manifest || plugin.problem) continue;
    for (const item of listManifestEntries(plugin.manifest, "")) {
      if (item.kind !== "tools" || path.isAbsolute(item.entry)) continue;
      const target = path.resolve(plugin.dir, item.entry);
      if (!isPathBelow(target, plugin.dir)) continue;
      if (folderWithoutIndex(target)) {
        warn("WHOST_ENTRY_NO_INDEX", `${plugin.name}:${item.entry}`, `${plugin.name}: the tools entry "${item.entry}" (${target}) is a folder without index.ts or index.js`, `Ask the plugin's author to name the modules in the entry, or add an index module.`);
      }
    }
  }
}

/**
 * The folders of marketplace plugins (and their tools folders), in the host's order: the project's enabled entries,
 * then the user's not shadowed. A project entry disabled while the user's copy is enabled is a
 * warning: the host loads the user's.
 */
async function marketplaceToolRoots(world: DoctorWorld, trusted: boolean, warn: Warn): Promise<{ id: string; dir: string; toolsDir: string }[]> {
  const userFile = xcshPaths(world.roots).installedPlugins;
  const projectFile = trusted ? projectRegistryFile(world.cwd, world.roots) : undefined;
  const user = await registryEntries(userFile);
  const project = projectFile && path.resolve(projectFile) !== path.resolve(userFile) ? await registryEntries(projectFile) : new Map<string, RegistryEntry[]>();
  for (const [id, entries] of project) {
    if (entries.length > 0 && entries.every((e) => e.entry.enabled === false) && (user.get(id) ?? []).some((e) => e.entry.enabled !== false)) {
      warn("WHOST_PROJECT_DISABLED", id, `${projectFile} disables ${id}, which is also installed for the user`, `To keep it off under the host too, disable it for the user as well, or uninstall the user's copy.`);
    }
  }
  const hostProjectIds = new Set([...project].filter(([, entries]) => entries.some((e) => e.entry.enabled !== false)).map(([id]) => id));
  const place = placeOf("xcsh-install", { roots: world.roots });
  const roots: { id: string; dir: string; toolsDir: string }[] = [];
  const add = (id: string, entries: RegistryEntry[]) => {
    for (const item of entries) {
      if (item.entry.enabled === false) continue;
      let real: string;
      try {
        real = confinePath(item.entry.installPath, place, { what: "install path" }, { strictlyBelow: true });
      } catch {
        continue; // reported by the marketplace area
      }
      roots.push({ id, dir: real, toolsDir: path.join(real, "tools") });
    }
  };
  for (const [id, entries] of project) add(id, entries);
  for (const [id, entries] of user) if (!hostProjectIds.has(id)) add(id, entries);
  return roots;
}

/** The host's marketplace discovery reads the user registry below the config folder, not the XDG data folder. */
function checkXdgRegistry(area: AreaFindings, world: DoctorWorld): void {
  const paths = xcshPaths(world.roots);
  const userFile = paths.installedPlugins;
  const hostDiscoveryRegistry = path.join(world.roots.home, paths.configDirName, "plugins", "installed_plugins.json");
  if (path.resolve(hostDiscoveryRegistry) === path.resolve(userFile) || jsonState(userFile) === "missing") return;
  area.problem(
    "host:WHOST_XDG_REGISTRY",
    "warn",
    `WHOST_XDG_REGISTRY: the plugins folder is ${paths.plugins} ($XDG_DATA_HOME/xcsh exists), where the host installs marketplace plugins ` +
      `(extensibility/plugins/marketplace/registry.ts:34), but the host's tool discovery reads ${hostDiscoveryRegistry} (discovery/helpers.ts:759): ` +
      "xcsh-tools lists the marketplace plugins' tools, the host may not load them",
    { hint: `Until the host reads the same file, keep a copy at ${hostDiscoveryRegistry}, or move $XDG_DATA_HOME/xcsh away.`, manual: MANUAL },
  );
}
