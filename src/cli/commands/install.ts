/**
 * `xcsh-tools install <spec>...`: resolve every spec (registry, tarball, URL, folder, git),
 * check each is an xcsh plugin and its requested features exist, then install them all in one
 * transaction (arborist in a staging copy, each plugin validated with its tools loaded in a
 * child process). `--dry-run` prints the plan and writes nothing. Lifecycle scripts run only
 * with `--allow-scripts` (or settings `allowScripts`), and only after the user allowed them with
 * the plugins' hooks (plugins/install-scripts.ts); a dry run names them and runs none.
 */
import path from "node:path";
import type { Command } from "commander";
import { npmClient, planAndApply, printWouldRunScripts, reportPlanned } from "../plugin-command.js";
import { usageError } from "../command-errors.js";
import type { CommandContext, CommandModule } from "../context.js";
import type { DeclaredPlugin } from "../../manifest/team-declaration.js";
import type { DeclarationEdit } from "../../teamset/index.js";

export const register: CommandModule["register"] = (program, getContext) => {
  program
    .command("install [spec...]")
    .alias("i")
    .description("install plugins: with no spec, restore the project's set (xcsh-team.json and its lock); else from npm (name, name@version|range|tag, tarball, URL, folder, git URL; features: name[a,b]) or a marketplace (name@marketplace)")
    .option("--dry-run", "print the plan; write nothing")
    .option("--frozen", "with no spec (CI): fail, writing nothing, unless xcsh-team.lock.json already describes the declared set")
    .option("--offline", "with no spec: use only the plugin seeds (XCSH_PLUGIN_SEED_DIR) and the caches; fail with EOFFLINE listing what they lack")
    .option("--allow-scripts", "run the packages' install scripts (off by default)")
    .option("--scope <scope>", "user (default) or project: in a repository, declared in xcsh-team.json and restored (npm plugins are still installed for you, the host loads them per user); elsewhere marketplace plugins only, in the project's .xcsh/")
    .option("-y, --yes", "accept what the plugins run without asking (marketplace: hooks, MCP/LSP servers, bin/; npm: hook and extension modules, and install scripts with --allow-scripts)")
    .action(async (specs: string[], flags: { dryRun?: boolean; scope?: string; allowScripts?: boolean; yes?: boolean; frozen?: boolean; offline?: boolean }, command: Command) => {
      const ctx = getContext(command);
      if (specs.length === 0 && flags.scope === undefined) return restoreCommand(ctx, flags);
      if (flags.frozen) throw usageError("--frozen applies to `install` with no spec (restoring the project's set)", "Drop --frozen, or run `xcsh-tools install --frozen` alone.");
      if (flags.offline) throw usageError("--offline applies to `install` with no spec (restoring the project's set from the seeds and caches)", "Drop --offline, or run `xcsh-tools install --offline` alone.");
      if (flags.scope === "project" && specs.length > 0) {
        const { teamWriteRoot } = await import("../team-write.js");
        const root = teamWriteRoot(ctx);
        if (root !== undefined) return installIntoSet(ctx, root, specs, flags);
      }
      if (await (await import("./marketplace.js")).dispatchChange(ctx, "install", specs, flags)) return;
      if (specs.length === 0) throw usageError("install needs at least one spec", "e.g. xcsh-tools install @acme/xcsh-search");
      await installSpecs(ctx, specs, flags);
    });
};

/** Install npm specs into `ctx`'s plugins folder (`install <spec>...`, and `seed`, which points `ctx` at the seed it builds). */
export async function installSpecs(ctx: CommandContext, specs: string[], flags: { dryRun?: boolean; allowScripts?: boolean; yes?: boolean }): Promise<void> {
  const { parseInstallSpec } = await import("../../plugins/spec.js");
  const parsed = specs.map((spec) => parseInstallSpec(spec, ctx.cwd));
  const { resolveSpecs } = await import("../../plugins/resolve.js");
  const { planInstall } = await import("../../plugins/plan.js");
  const client = await npmClient(ctx, { allowScripts: Boolean(flags.allowScripts) });
  // A local repository the user typed (git+file://…) may be cloned; nothing else local may.
  const { isLocalGitUrl } = await import("../../core/source-args.js");
  if (parsed.some((p) => p.source === "git" && typeof p.parsed.fetchSpec === "string" && isLocalGitUrl(p.parsed.fetchSpec))) client.allowLocalGit = true;
  const dryRun = Boolean(flags.dryRun);
  // Installing: each registry plugin's tarball is checked once, as npm's installer fetches it (resolve.ts).
  if (!dryRun) client.pluginTarballs = new Map();
  let resolved: Awaited<ReturnType<typeof resolveSpecs>> = [];
  const result = await planAndApply(ctx, {
    title: `Installing ${specs.join(", ")}`,
    validates: true,
    label: `install ${specs.join(" ")}`,
    client,
    dryRun,
    prepare: async (progress) => {
      progress("Resolving");
      resolved = await resolveSpecs(parsed, client, ctx.cwd);
    },
    planFor: (inventory) => planInstall(inventory, resolved, { allowScripts: client.allowScripts }),
    consent: { yes: Boolean(flags.yes) },
  }).catch(async (error: unknown) => {
    // A bare name npm does not know but an added marketplace offers: say which id was meant.
    throw await (await import("./marketplace.js")).withMarketplaceSuggestion(ctx, error, specs, "install");
  });
  // Tool names the new plugins share with built-ins or other tools: said now, not at a session.
  const conflicts = await (await import("../tool-conflicts.js")).toolConflictsAfter(ctx, (result.applied?.plugins ?? []).map((p) => p.name));
  // A dry run runs no script: it names those the real run would, after asking.
  const changing = new Set(result.plan.actions.filter((a) => a.apply.kind === "install").map((a) => a.name));
  const wouldRun = dryRun && client.allowScripts ? resolved.filter((r) => changing.has(r.name)).flatMap((r) => r.installScripts) : [];
  if (!(await reportPlanned(ctx, result, dryRun, { ...conflicts.json, ...(dryRun && client.allowScripts ? { wouldRunScripts: wouldRun } : {}) }))) return;
  if (dryRun && client.allowScripts) await printWouldRunScripts(ctx, wouldRun);
  for (const plugin of result.applied?.plugins ?? []) {
    if (plugin.scripts.length > 0) {
      ctx.output.line(
        plugin.scriptsRan
          ? `${plugin.name} ran its install scripts (${plugin.scripts.join(", ")})`
          : `${plugin.name} declares install scripts (${plugin.scripts.join(", ")}) that were NOT run; reinstall with --allow-scripts if it needs them`,
      );
    }
  }
  if (!dryRun) {
    const n = result.applied?.plugins.length ?? 0;
    ctx.output.line(n > 0 ? `Installed ${result.applied!.plugins.map((p) => `${p.name}@${p.version ?? "?"}`).join(", ")}` : "Nothing to do.");
    if (n > 0) for (const line of await bringsLines(ctx, result.applied!.plugins.map((p) => p.name))) ctx.output.line(line);
  }
  conflicts.warn();
}

/**
 * What each installed plugin brings, by kind, and what of it xcsh loads ("1 extension; pi only,
 * not loaded by xcsh: 3 prompt templates"), as `list` says it: a pi package's own kinds install
 * with it, and the user learns here that xcsh does not load them.
 */
async function bringsLines(ctx: CommandContext, names: readonly string[]): Promise<string[]> {
  // The new plugins only, read directly: the boot index's inventory is a cache this command leaves alone.
  const [{ xcshPaths }, { scanPluginComponents }, { summarizeComponents }, manifests, { readJsonFile }] = await Promise.all([
    import("../../core/paths.js"),
    import("../../components/scan.js"),
    import("../../components/summary.js"),
    import("../../manifest/plugin-manifest.js"),
    import("../../manifest/json-file.js"),
  ]);
  const lines: string[] = [];
  for (const name of names) {
    const dir = path.join(xcshPaths(ctx.roots).pluginsNodeModules, name);
    const pkg = await readJsonFile(path.join(dir, "package.json")).catch(() => undefined);
    const picked = manifests.pickManifest(pkg);
    const read = picked ? manifests.readHostManifest(picked.manifest) : undefined;
    if (!picked || !read?.ok) continue;
    lines.push(`  ${name}: ${summarizeComponents(scanPluginComponents(dir, { rootKind: "npm", manifest: read.value, manifestKey: picked.key }).components)}`);
    // Shapes the host loads off our schema, followed as it does (docs/host-parity.md): said once here, in the user's terms.
    const checked = manifests.validatePluginPackageJson(pkg);
    for (const w of checked.warnings.filter((x) => x.code.startsWith("WHOST_"))) lines.push(`  warning ${w.code} ${name} ${w.message}${w.forUser ? ` — ${w.forUser}` : ""}`);
  }
  return lines;
}

/** `install` with no spec: restore the project's declared set (cli/team-restore.ts). */
async function restoreCommand(ctx: CommandContext, flags: { dryRun?: boolean; allowScripts?: boolean; yes?: boolean; frozen?: boolean; offline?: boolean }): Promise<void> {
  const { restoreProject, restoreLines, restoreResult, teamRootOf } = await import("../team-restore.js");
  const report = await restoreProject(ctx, flags);
  if (ctx.output.json) return ctx.output.result(restoreResult(report));
  for (const line of restoreLines(teamRootOf(ctx), report)) ctx.output.line(line);
}

/**
 * `install <spec>... --scope project` where the project has (or gets) a declared set: each spec
 * becomes an entry of xcsh-team.json, then the set is restored (cli/team-write.ts). A marketplace
 * plugin gets `{}`; an npm spec given bare or as a dist-tag gets `^<resolved>` as npm saves it, a
 * range or version stays as typed; a git URL or https tarball URL as typed (locked at its commit or
 * integrity); folders and tarball files are `ETEAM_SPEC` (not on a teammate's machine).
 */
async function installIntoSet(ctx: CommandContext, root: string, specs: string[], flags: { dryRun?: boolean; allowScripts?: boolean; yes?: boolean }): Promise<void> {
  const { changeDeclaration, isDeclaredMarketplaceId } = await import("../team-write.js");
  const { semver } = await import("../../core/npm-spec.js");
  await changeDeclaration(ctx, root, "install plugins into the project (--scope project)", flags, async (state) => {
    const edits: DeclarationEdit[] = [];
    for (const spec of specs) {
      const entry = marketplaceEntryOf(spec, (id) => isDeclaredMarketplaceId(id, state), (text) => semver.validRange(text) !== null) ?? (await npmEntryOf(ctx, spec, state.paths.declaration));
      // An entry the team had switched off is switched on again: that is what installing it means.
      edits.push({ op: "add-plugin", key: entry.key, entry: entry.entry }, { op: "enable", key: entry.key, enabled: true });
    }
    return edits;
  });
}

/**
 * The declaration entry of `name@marketplace` (`{}`) or `name@marketplace@<range>` (the range the
 * catalog's version must meet), when that marketplace is declared; `undefined` for anything else.
 */
function marketplaceEntryOf(spec: string, declared: (id: string) => boolean, isRange: (text: string) => boolean): { key: string; entry: DeclaredPlugin } | undefined {
  if (declared(spec)) return { key: spec, entry: {} };
  const at = spec.lastIndexOf("@");
  const id = spec.slice(0, at);
  const range = spec.slice(at + 1);
  return at > 0 && range !== "" && declared(id) && isRange(range) ? { key: id, entry: { version: range } } : undefined;
}

/**
 * A git URL or an https tarball URL, as typed: every teammate can fetch it, and the lock pins it
 * (the commit, the tarball's integrity). Checked as the declaration's reader checks it before
 * anything is fetched (a `file://` repository or an http tarball is `ETEAM_SPEC` / `EGIT_URL`);
 * the key is the package's own name, read from its manifest (pacote clones without running it).
 */
async function sharedSourceEntryOf(ctx: CommandContext, parsed: import("../../plugins/spec.js").InstallSpec, file: string): Promise<{ key: string; entry: DeclaredPlugin }> {
  const { npmSpecIssue } = await import("../../manifest/team-declaration.js");
  const { teamIssueError } = await import("../../manifest/team-file.js");
  const raw = String(parsed.parsed.rawSpec ?? parsed.npmSpec);
  const issue = npmSpecIssue(parsed.name ?? "plugin", raw, "/plugins/<name>");
  if (issue) throw teamIssueError(file, [issue], "ETEAM_SPEC");
  const { loadPacote, npmError, npmOptions } = await import("../../plugins/npm-client.js");
  const client = await npmClient(ctx);
  let name: string;
  try {
    name = String((await (await loadPacote()).manifest(parsed.npmSpec, npmOptions(client) as never)).name);
  } catch (error) {
    throw npmError(error, parsed.npmSpec, client, parsed.name);
  }
  return { key: name, entry: { spec: raw, ...(parsed.features === null ? {} : { features: parsed.features }) } };
}

/** The declaration entry of an npm spec typed on the command line. */
async function npmEntryOf(ctx: CommandContext, spec: string, file: string): Promise<{ key: string; entry: DeclaredPlugin }> {
  const { XcshToolsError } = await import("../../core/errors.js");
  const { mayNameMarketplacePlugin, splitPluginId } = await import("../../manifest/installed-plugins.js");
  const { semver } = await import("../../core/npm-spec.js");
  const market = mayNameMarketplacePlugin(spec) && !spec.startsWith("npm:") ? splitPluginId(spec.replace(/\[[^\]]*\]$/, ""))?.marketplace : undefined;
  if (market !== undefined && market !== "latest" && !semver.validRange(market)) {
    throw new XcshToolsError("ETEAM_UNKNOWN_MARKETPLACE", `${file}: "${spec}": the marketplace "${market}" is not declared in the project (expected one under /marketplaces of ${file} or in .claude/settings.json)`, {
      file,
      path: "/marketplaces",
      hint: `Declare it first: xcsh-tools marketplace add <source> --scope project. For the npm dist-tag "${market}", write npm:${spec}.`,
      exitCode: 2,
    });
  }
  const { parseInstallSpec } = await import("../../plugins/spec.js");
  const parsed = parseInstallSpec(spec, ctx.cwd);
  if (parsed.source === "git" || parsed.source === "remote") return sharedSourceEntryOf(ctx, parsed, file);
  if (parsed.source !== "registry" || !parsed.name) {
    throw new XcshToolsError("ETEAM_SPEC", `${file}: "${spec}" is a ${parsed.source} spec, which a teammate's machine cannot restore (expected a registry name, version, range or dist-tag)`, {
      file,
      path: "/plugins",
      hint: "Publish the plugin and install it by name, or put it in a `directory` marketplace inside the repository (xcsh-tools marketplace add ./folder --scope project).",
      exitCode: 2,
    });
  }
  const features = parsed.features === null ? {} : { features: parsed.features };
  // A bare name is npm's range "*" (or an empty spec): saved as `^<resolved>` like a dist-tag.
  const raw = String(parsed.parsed.rawSpec ?? "");
  if (parsed.parsed.type !== "tag" && raw !== "" && raw !== "*") return { key: parsed.name, entry: { spec: raw, ...features } };
  // npm saves a bare name or a dist-tag as `^<the version it resolved to>`.
  const { loadPacote, npmError, npmOptions, npmPolicySourceOf } = await import("../../plugins/npm-client.js");
  const client = await npmClient(ctx);
  // The organization policy before that registry request (the restore that follows judges the whole set again).
  const policy = await import("../../core/policy.js");
  policy.assertNotForbidden(policy.assertSourcesAllowed([{ source: npmPolicySourceOf(parsed.npmSpec, client), what: "plugin", subject: `install ${spec}` }]), parsed.name);
  const pacote = await loadPacote();
  let version: string;
  try {
    version = String((await pacote.manifest(parsed.npmSpec, npmOptions(client) as never)).version);
  } catch (error) {
    throw npmError(error, parsed.npmSpec, client, parsed.name);
  }
  return { key: parsed.name, entry: { spec: `^${version}`, ...features } };
}
