/**
 * `xcsh-tools audit [--json]`: the inventory a security team asks for (issue 43, docs/cli.md).
 * Every installed plugin (npm, and marketplace plugins of the user and the project) with its
 * source, resolved version, integrity or commit, what it runs (hooks, MCP/LSP servers, monitors,
 * bin/, the modules the host imports, install scripts: components/consent.ts, the same summary an
 * install asks consent for), its scope, who put it there, and what the organization policy says of
 * it. A command of its own rather than a `list --json` mode: `list` is a person's view (features,
 * context tokens, the project's set) whose JSON grows with it; the audit is one stable document
 * (`auditVersion`) a fleet's tooling diffs from machine to machine. It reads only and imports no
 * plugin code; a broken policy file is reported in the document, not thrown.
 */
import type { Command } from "commander";
import path from "node:path";
import type { CommandContext, CommandModule } from "../context.js";
import { style } from "../output.js";

/** Who put a plugin on this machine. `seed`: a read-only seed directory (XCSH_PLUGIN_SEED_DIR) — see `seedOf`. */
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
  installScripts: { declared: string[]; ran: boolean };
  installedBy: InstalledBy;
  policy: { allowed: boolean; code?: string; reason?: string; required: boolean };
  path: string;
}

/** The audit document (`--json`). */
export interface AuditReport {
  auditVersion: 1;
  policy: { file: string; state: "none" | "ok" | "broken"; error?: { code: string; message: string } };
  plugins: AuditPlugin[];
}

/**
 * The seed a plugin comes from, when one does: the seed helper (XCSH_PLUGIN_SEED_DIR) fills this
 * in; until then nothing is seeded and every plugin is the user's or the project's.
 */
export function seedOf(_root: string): string | undefined {
  return undefined;
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
  const verdict = (provider: string, id: string) => {
    const refused = judge(provider, id);
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
  const runsOf = (id: string, npm: boolean) => {
    const p = components.find((c) => c.id === id && (c.rootKind === "npm") === npm);
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
      installedBy: seedOf(p.dir) ? "seed" : team ? "project" : "user",
      policy: verdict("npm", p.name),
      path: p.dir,
    });
  }

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
      installedBy: seedOf(row.installPath) ? "seed" : row.scope === "project" ? "project" : "user",
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

function auditLines(ctx: CommandContext, report: AuditReport): string[] {
  const lines: string[] = [];
  const { policy } = report;
  lines.push(policy.state === "none" ? `Organization policy: none (${policy.file} does not exist)` : policy.state === "ok" ? `Organization policy: ${policy.file}` : style(ctx.output, "red", `Organization policy: ${policy.file} is unusable (${policy.error!.code}): ${policy.error!.message}`));
  if (report.plugins.length === 0) lines.push("No plugins installed.");
  for (const p of report.plugins) {
    const pin = p.commit ? `commit ${p.commit}` : p.integrity ? p.integrity : "no integrity or commit recorded";
    lines.push(`${style(ctx.output, "bold", p.id)}@${p.version ?? "missing"}  ${p.kind}  ${p.scope}  ${p.enabled ? "enabled" : "disabled"}  installed by ${p.installedBy}`);
    const market = p.source.marketplaceSource ? ` (marketplace ${p.source.marketplace}: ${p.source.marketplaceSource.type} ${p.source.marketplaceSource.uri})` : "";
    lines.push(`  source: ${p.source.type} ${p.source.spec}${market}`);
    lines.push(`  pinned: ${pin}${p.resolved ? `  resolved: ${p.resolved}` : ""}`);
    for (const r of p.runs) lines.push(`  runs: ${r.kind} ${r.name}: ${r.runs}`);
    if (p.installScripts.declared.length) lines.push(`  install scripts: ${p.installScripts.declared.join(", ")} (${p.installScripts.ran ? "ran" : "not run"})`);
    if (!p.policy.allowed) lines.push(style(ctx.output, "red", `  policy: ${p.policy.code}: ${p.policy.reason}`));
    if (p.policy.required) lines.push("  policy: required");
  }
  return lines;
}
