/**
 * The world the marketplace engine runs in, injected whole: roots, project
 * folder, environment, timeouts, npm options and the mutation world. The CLI builds it from its
 * command context (`marketplaceContextFrom`); tests build it directly with a temp HOME.
 *
 * Every mutation goes through the install engine's `runMutation` (same lock on
 * `<plugins>/.xcsh-tools`, same journal, same boot-index refresh), so marketplace changes and npm
 * plugin changes never interleave.
 */
import path from "node:path";
import { XcshToolsError } from "../core/errors.js";
import { untrustedProjectError } from "../core/trust.js";
import { placeOf } from "../core/state-places.js";
import { projectPaths, xcshPaths, type XcshRoots } from "../core/paths.js";
import type { MutationWorld } from "../plugins/mutation.js";
import type { ExecutableRequest } from "../components/consent.js";

/** Where an install or a marketplace lives. */
export type Scope = "user" | "project";

/** Everything the engine needs from outside. */
export interface MarketplaceContext extends MutationWorld {
  roots: XcshRoots;
  /** The project folder (`--cwd`): project scope reads and writes `<cwd>/.xcsh/…`. */
  cwd: string;
  /**
   * The folder the user typed from (the command's `--cwd`, which may be below the project
   * folder): a relative source on the command line is read from here. Defaults to `cwd`.
   */
  typedFrom?: string;
  /**
   * Whether the project is trusted (core/trust.ts). Untrusted (the default): its marketplaces and
   * installs are not read, and project scope may not be written (`EUNTRUSTED_PROJECT`).
   */
  projectTrusted?: boolean;
  env: NodeJS.ProcessEnv;
  /** Timeout of one git command (settings `timeouts.gitMs`). */
  gitTimeoutMs: number;
  /** Timeout of one HTTP fetch of a catalog (settings `timeouts.fetchMs`). */
  fetchTimeoutMs: number;
  /** pacote options (registry, scoped registries, auth) for `npm` plugin sources. */
  npmOptions?: Record<string, unknown>;
  /** Clock (tests pin it). */
  now?: () => Date;
  /**
   * Called, before anything is committed, when an install or update changes what a plugin runs
   * (hooks, MCP/LSP servers, monitors, bin/); when it adds or changes some (`needsConsent`) it
   * throws to refuse. Without it nobody is asked (the library's callers decide for themselves).
   */
  approveExecutables?: (request: ExecutableRequest) => Promise<void>;
}

export type { ExecutableRequest } from "../components/consent.js";

/** The paths of both scopes. */
export interface ScopePaths {
  scope: Scope;
  /** `marketplaces.json` of this scope. */
  marketplacesRegistry: string;
  /** Cached catalogs and clones of this scope's marketplaces. */
  marketplaceCache: string;
  /** `installed_plugins.json` of this scope. */
  installedPlugins: string;
}

/** The user's and the project's paths. */
export function scopePaths(ctx: Pick<MarketplaceContext, "roots" | "cwd">, scope: Scope): ScopePaths {
  const p = xcshPaths(ctx.roots);
  if (scope === "user") {
    return { scope, marketplacesRegistry: p.marketplacesRegistry, marketplaceCache: placeOf("user-catalog", { roots: ctx.roots }), installedPlugins: p.installedPlugins };
  }
  const project = projectPaths(ctx.cwd);
  return {
    scope,
    marketplacesRegistry: project.marketplacesRegistry,
    // Project catalogs are cached in the project so two projects may use one name for different catalogs.
    marketplaceCache: placeOf("project-catalog", { roots: ctx.roots, cwd: ctx.cwd }),
    // In the config folder `PI_CONFIG_DIR` names, as the host's registry path (helpers.ts:687).
    installedPlugins: path.join(ctx.cwd, p.configDirName, "plugins", "installed_plugins.json"),
  };
}

/** True when project scope means something distinct from user scope at `cwd`. */
export function assertProjectScope(ctx: Pick<MarketplaceContext, "roots" | "cwd">): void {
  const user = scopePaths(ctx, "user");
  const project = scopePaths(ctx, "project");
  if (path.resolve(ctx.cwd) === path.resolve(ctx.roots.home) || path.resolve(user.installedPlugins) === path.resolve(project.installedPlugins)) {
    throw new XcshToolsError("EPROJECT_SCOPE", `--scope project needs a project folder; ${ctx.cwd} is the home folder or the xcsh root itself`, {
      hint: "Run the command inside the project (or pass --cwd <project>).",
      exitCode: 2,
    });
  }
}

/**
 * Project scope may be used for `doing`: a project folder (`EPROJECT_SCOPE`) that the user trusts
 * (`EUNTRUSTED_PROJECT`). Checked before anything of the scope is read or written.
 */
export function assertProjectTrusted(ctx: Pick<MarketplaceContext, "roots" | "cwd" | "projectTrusted">, doing: string): void {
  assertProjectScope(ctx);
  if (ctx.projectTrusted !== true) throw untrustedProjectError(ctx.cwd, doing);
}

/** `assertProjectTrusted` when `scope` is project. */
export function assertScopeUsable(ctx: Pick<MarketplaceContext, "roots" | "cwd" | "projectTrusted">, scope: Scope | undefined, doing: string): void {
  if (scope === "project") assertProjectTrusted(ctx, doing);
}

/** Our list of project registries we have written (for cache reference checks across projects). */
export function projectListFile(ctx: Pick<MarketplaceContext, "roots">): string {
  return path.join(xcshPaths(ctx.roots).ours, "marketplace-projects.json");
}

/** Now, as an ISO string. */
export function nowIso(ctx: Pick<MarketplaceContext, "now">): string {
  return (ctx.now ? ctx.now() : new Date()).toISOString();
}
