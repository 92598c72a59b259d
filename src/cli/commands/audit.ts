/**
 * `xcsh-tools audit [--json]`: the inventory a security team asks for (issue 43, docs/cli.md).
 * Every installed plugin (npm, marketplace plugins of the user and the project, and the plugins
 * the seeds of XCSH_PLUGIN_SEED_DIR provide, each judged from its own seed) with its
 * source, resolved version, integrity or commit, what it runs (hooks, MCP/LSP servers, monitors,
 * bin/, the modules the host imports, install scripts: components/consent.ts, the same summary an
 * install asks consent for), its scope, who put it there, and what the organization policy says of
 * it. A command of its own rather than a `list --json` mode: `list` is a person's view (features,
 * context tokens, the project's set) whose JSON grows with it; the audit is one stable document
 * (`auditVersion`) a fleet's tooling diffs from machine to machine. It reads only and imports no
 * plugin code; a broken policy file is reported in the document, not thrown.
 */
import type { Command } from "commander";
import { readFileSync } from "node:fs";
import path from "node:path";
import type { InstalledPluginComponents } from "../../components/installed.js";
import type { SeedManifest } from "../../manifest/seed.js";
import type { CommandContext, CommandModule } from "../context.js";
import { style } from "../output.js";

/** Who put a plugin on this machine. `seed`: a read-only seed directory (XCSH_PLUGIN_SEED_DIR), named in `seed`. */
export type InstalledBy = "user" | "project" | "seed";

/** One plugin of the audit. */
export interface AuditPlugin {
  id: string;
  kind: "npm" | "marketplace";
  scope: "user" | "project";
  enabled: boolean;
  version: string | null;
  source: { type: string; spec: string; marketplace?: string; marketplaceSource?: { type: string; uri: string } };
  resolved: string | null;
  integrity: string | null;
  commit: string | null;
  runs: { kind: string; name: string; runs: string }[];
  /** `ran: null`: not recorded (a seed's build does not say whether it ran them). */
  installScripts: { declared: string[]; ran: boolean | null };
  installedBy: InstalledBy;
  /** The seed folder a seeded plugin is used from (`installedBy: "seed"`). */
  seed?: string;
  policy: { allowed: boolean; code?: string; reason?: string; required: boolean };
  path: string;
}

/** The audit document (`--json`). */
export interface AuditReport {
  auditVersion: 1;
  policy: { file: string; state: "none" | "ok" | "broken"; error?: { code: string; message: string } };
  plugins: AuditPlugin[];
}

export const register: CommandModule["register"] = (program, getContext) => {
  program
    .command("audit")
    .description("inventory for a security review: every plugin's source, version, integrity or commit, what it runs, scope, who installed it, and the organization policy's verdict")
    .action(async (_flags: unknown, command: Command) => {
      const ctx = getContext(command);
      const report = await auditReport(ctx);
      if (ctx.output.json) return ctx.output.result(report);
      for (const line of auditLines(ctx, report)) ctx.output.line(line);
    });
};

/** Build the audit of this machine and project. */
export async function auditReport(ctx: CommandContext): Promise<AuditReport> {
  const [{ loadManagedPolicy, listNames }, { policyJudge }, { executablesOf }, { installedComponents }, { readStateView }, { readJsonOrUndefined }, { xcshPaths }] = await Promise.all([
    import("../../core/policy.js"),
    import("../../boot/policy-filter.js"),
    import("../../components/consent.js"),
    import("../components-view.js"),
    import("../state-command.js"),
    import("../../manifest/json-file.js"),
    import("../../core/paths.js"),
  ]);
  const loaded = loadManagedPolicy();
  const judge = await policyJudge(loaded, ctx.roots, ctx.cwd);
  const required = (id: string) => loaded.state === "ok" && listNames(loaded.policy.plugins?.required, id) !== undefined;
  const verdict = (provider: string, id: string, seed?: string) => {
    const refused = judge(provider, id, seed);
    return { allowed: refused === undefined, ...(refused ? { code: refused.code, reason: refused.reason } : {}), required: required(id) };
  };
  const paths = xcshPaths(ctx.roots);
  const quietly = (file: string): unknown => {
    try {
      return readJsonOrUndefined(file);
    } catch {
      return undefined;
    }
  };
  const components = await installedComponents(ctx, { namedTools: false });
  const runsOf = (id: string, npm: boolean, seed?: string) => {
    const p = components.find((c) => c.id === id && (c.rootKind === "npm") === npm && c.seed === seed);
    return p ? executablesOf(p.components, { root: p.root, npm }).map(({ kind, name, runs }) => ({ kind, name, runs })) : [];
  };

  const plugins: AuditPlugin[] = [];
  const view = await readStateView(ctx);
  const lockPackages = (quietly(path.join(paths.plugins, "package-lock.json")) as { packages?: Record<string, { resolved?: string; integrity?: string }> } | undefined)?.packages ?? {};
  for (const p of view.inventory) {
    const locked = lockPackages[`node_modules/${p.name}`];
    const resolved = locked?.resolved ?? null;
    const team = Object.keys(p.record?.team?.projects ?? {}).length > 0 && !p.record?.personal;
    plugins.push({
      id: p.name,
      kind: "npm",
      scope: "user",
      enabled: (await import("../../plugins/state-change.js")).enabledState(view, p.name).enabled,
      version: p.version ?? null,
      source: { type: p.linked ? "link" : (p.record?.source ?? "registry"), spec: p.record?.spec ?? p.dependency },
      resolved,
      integrity: locked?.integrity ?? null,
      commit: resolved ? (/^git.*#([0-9a-f]{40,64})$/.exec(resolved)?.[1] ?? null) : null,
      runs: runsOf(p.name, true),
      installScripts: { declared: p.scripts, ran: p.record?.scriptsRan ?? false },
      installedBy: team ? "project" : "user",
      policy: verdict("npm", p.name),
      path: p.dir,
    });
  }
  plugins.push(...(await seededPlugins(components, verdict)));

  const { listContext } = await import("../marketplace-list.js");
  const mctx = await listContext(ctx);
  const [{ listMarketplacePlugins }, { loadEngineState, findMarketplace }] = await Promise.all([import("../../marketplace/installed-list.js"), import("../../marketplace/state.js")]);
  const state = await loadEngineState(mctx);
  for (const row of await listMarketplacePlugins(mctx)) {
    if (row.shadowedBy || row.offBySet) continue;
    const market = findMarketplace(state, row.marketplace, row.scope)?.entry ?? findMarketplace(state, row.marketplace)?.entry;
    plugins.push({
      id: row.id,
      kind: "marketplace",
      scope: row.scope === "project" ? "project" : "user",
      enabled: row.enabled,
      version: row.version,
      source: { type: "marketplace", spec: row.id, marketplace: row.marketplace, ...(market ? { marketplaceSource: { type: market.sourceType, uri: market.sourceUri } } : {}) },
      resolved: null,
      integrity: null,
      commit: row.gitCommitSha ?? null,
      runs: runsOf(row.id, false),
      installScripts: { declared: [], ran: false },
      installedBy: row.scope === "project" ? "project" : "user",
      policy: verdict("xcsh-plugins", row.id),
      path: row.installPath,
    });
  }
  return {
    auditVersion: 1,
    policy: { file: loaded.file, state: loaded.state, ...(loaded.state === "broken" ? { error: { code: loaded.error.code, message: loaded.error.message } } : {}) },
    plugins,
  };
}

/**
 * The plugins the seeds provide, as the loader uses them: the first seed listing a name wins
 * (components/installed.ts `collectSeededComponents` walks them so), each judged from its own
 * seed's records. Version and integrity are the seed manifest's; the tarball URL its lock's.
 */
async function seededPlugins(components: readonly InstalledPluginComponents[], verdict: (provider: string, id: string, seed?: string) => AuditPlugin["policy"]): Promise<AuditPlugin[]> {
  const rows = components.filter((c) => c.seed !== undefined && c.rootKind === "npm" && c.id !== c.seed);
  if (rows.length === 0) return [];
  const [{ seedPaths, readSeedManifest }, { executablesOf }, { readInstalledPackage }] = await Promise.all([import("../../manifest/seed.js"), import("../../components/consent.js"), import("../../plugins/inventory.js")]);
  const out: AuditPlugin[] = [];
  const records = new Map<string, { manifest?: SeedManifest; deps: Record<string, string>; packages: Record<string, { resolved?: string }> }>();
  for (const row of rows) {
    const seed = row.seed!;
    if (!records.has(seed)) {
      const plugins = seedPaths(seed).plugins;
      let manifest: SeedManifest | undefined;
      try {
        manifest = readSeedManifest(seed);
      } catch {
        // Reported as the row's problem (and by doctor); the audit still lists what it can.
      }
      records.set(seed, { ...(manifest ? { manifest } : {}), deps: readRecord<Record<string, string>>(path.join(plugins, "package.json"), "dependencies"), packages: readRecord(path.join(plugins, "package-lock.json"), "packages") });
    }
    const record = records.get(seed)!;
    const entry = record.manifest?.plugins[row.id];
    const resolved = record.packages[`node_modules/${row.id}`]?.resolved ?? null;
    const pkg = await readInstalledPackage(seedPaths(seed).nodeModules, row.id);
    out.push({
      id: row.id,
      kind: "npm",
      scope: "user",
      enabled: row.enabled,
      version: entry?.version ?? row.version ?? null,
      source: { type: "seed", spec: record.deps[row.id] ?? `${row.id}@${entry?.version ?? "*"}` },
      resolved,
      integrity: entry?.integrity ?? null,
      commit: resolved ? (/^git.*#([0-9a-f]{40,64})$/.exec(resolved)?.[1] ?? null) : null,
      runs: executablesOf(row.components, { root: row.root, npm: true }).map(({ kind, name, runs }) => ({ kind, name, runs })),
      installScripts: { declared: pkg.scripts, ran: pkg.scripts.length > 0 ? null : false },
      installedBy: "seed",
      seed,
      policy: verdict("npm", row.id, seed),
      path: row.root,
    });
  }
  return out;
}

/** One object field of a JSON state file, `{}` when the file or the field is not there or not an object. */
function readRecord<T extends Record<string, unknown>>(file: string, field: string): T {
  try {
    const value = (JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown> | null)?.[field];
    return (value !== null && typeof value === "object" && !Array.isArray(value) ? value : {}) as T;
  } catch {
    return {} as T;
  }
}

function auditLines(ctx: CommandContext, report: AuditReport): string[] {
  const lines: string[] = [];
  const { policy } = report;
  lines.push(policy.state === "none" ? `Organization policy: none (${policy.file} does not exist)` : policy.state === "ok" ? `Organization policy: ${policy.file}` : style(ctx.output, "red", `Organization policy: ${policy.file} is unusable (${policy.error!.code}): ${policy.error!.message}`));
  if (report.plugins.length === 0) lines.push("No plugins installed.");
  for (const p of report.plugins) {
    const pin = p.commit ? `commit ${p.commit}` : p.integrity ? p.integrity : "no integrity or commit recorded";
    lines.push(`${style(ctx.output, "bold", p.id)}@${p.version ?? "missing"}  ${p.kind}  ${p.scope}  ${p.enabled ? "enabled" : "disabled"}  installed by ${p.installedBy}`);
    const market = p.source.marketplaceSource ? ` (marketplace ${p.source.marketplace}: ${p.source.marketplaceSource.type} ${p.source.marketplaceSource.uri})` : "";
    lines.push(`  source: ${p.source.type} ${p.source.spec}${market}${p.seed ? ` (seed ${p.seed})` : ""}`);
    lines.push(`  pinned: ${pin}${p.resolved ? `  resolved: ${p.resolved}` : ""}`);
    for (const r of p.runs) lines.push(`  runs: ${r.kind} ${r.name}: ${r.runs}`);
    if (p.installScripts.declared.length) lines.push(`  install scripts: ${p.installScripts.declared.join(", ")} (${p.installScripts.ran === null ? "not recorded whether they ran" : p.installScripts.ran ? "ran" : "not run"})`);
    if (!p.policy.allowed) lines.push(style(ctx.output, "red", `  policy: ${p.policy.code}: ${p.policy.reason}`));
    if (p.policy.required) lines.push("  policy: required");
  }
  return lines;
}
