/**
 * The "components" area: what installed plugins bring besides tools, and what it costs.
 *
 * Context: the always-on tokens of the whole installation as xcsh loads it — every tool xcsh
 * loads (name, description and parameter schema, from the boot index; a tool never validated is
 * counted as unknown) plus the skills, commands and agents xcsh lists from plugins (name and
 * description) — against the `contextWarnTokens` setting (src/components/cost.ts has the method).
 *
 * Conflicts: agents are not namespaced by the host (its task tool keeps the first agent of a
 * name: the user's and the project's own agent folders in the order of `ownAgentDirs`, then
 * plugin `agents/` folders, project installs first); skills and commands of marketplace plugins
 * are `plugin:name` (discovery/claude-plugins.ts), so the user's own never hide them and they
 * clash only when two installed plugins share a name (from two marketplaces): the first in the
 * host's root order wins (project installs, then the user's, each in registry order). Each clash says which
 * file the host uses and which it hides. Nothing here imports plugin code.
 */
import { readdirSync, statSync } from "node:fs";
import path from "node:path";
import { readTextBounded } from "../core/bounded-read.js";
import { xcshPaths } from "../core/paths.js";
import { AreaFindings, type DoctorWorld } from "./world.js";

/**
 * The config folders the host's task tool reads agents from, in its order (task/discovery.ts
 * with config.ts `priorityList`): for each of `.xcsh`, `.codex`, `.gemini`, the project's nearest
 * `<base>/agents` (walking up from the project folder), then the user's (`~/.xcsh/agent/agents`,
 * `~/.codex/agents`, `~/.gemini/agents`). Claude Code's `.claude` folders are not read by xcsh.
 * Project folders are read only in a trusted project.
 */
function ownAgentDirs(world: DoctorWorld): { dir: string; where: string }[] {
  const dirs: { dir: string; where: string }[] = [];
  const root = xcshPaths(world.roots).root;
  const bases: { base: string; user: string; userLabel: string }[] = [
    { base: ".xcsh", user: path.join(root, "agent", "agents"), userLabel: "~/.xcsh/agent/agents" },
    { base: ".codex", user: path.join(world.roots.home, ".codex", "agents"), userLabel: "~/.codex/agents" },
    { base: ".gemini", user: path.join(world.roots.home, ".gemini", "agents"), userLabel: "~/.gemini/agents" },
  ];
  for (const { base, user, userLabel } of bases) {
    if (world.projectTrusted) {
      const nearest = nearestDir(world.cwd, path.join(base, "agents"));
      if (nearest) dirs.push({ dir: nearest, where: `the project's ${path.relative(world.cwd, nearest) || nearest}` });
    }
    dirs.push({ dir: user, where: `the user's ${userLabel}` });
  }
  return dirs;
}

/** The nearest `<ancestor>/<rel>` folder from `cwd` up, as the host's findAllNearestProjectConfigDirs. */
function nearestDir(cwd: string, rel: string): string | undefined {
  for (let dir = path.resolve(cwd); ; dir = path.dirname(dir)) {
    try {
      if (statSync(path.join(dir, rel)).isDirectory()) return path.join(dir, rel);
    } catch {
      // not here: one folder up
    }
    if (path.dirname(dir) === dir) return undefined;
  }
}

function mdFiles(dir: string): string[] {
  try {
    return readdirSync(dir)
      .filter((n) => n.endsWith(".md"))
      .sort()
      .map((n) => path.join(dir, n));
  } catch {
    return [];
  }
}

export async function checkComponents(world: DoctorWorld, settings: { contextWarnTokens: number }): Promise<AreaFindings> {
  const area = new AreaFindings("components");
  const projectTrusted = world.projectTrusted ?? false;
  let tools: { name: string; description?: string; parameters?: unknown; file: string }[] = [];
  let unvalidated = 0;
  try {
    const { listInstalledTools } = await import("../boot/index.js");
    const listed = await listInstalledTools({ cwd: world.cwd, projectTrust: projectTrusted, home: world.roots.home, xcshHome: world.roots.xcshHome, env: world.env, validate: false, write: false });
    tools = listed.tools;
    unvalidated = listed.index.reason.includes("never validated") ? Number(/^(\d+)/.exec(listed.index.reason)?.[1] ?? 0) : 0;
  } catch {
    tools = [];
  }
  const [{ collectInstalledComponents }, { toolCost }, { formatTokens }, { readFrontmatter }] = await Promise.all([
    import("../components/installed.js"),
    import("../components/cost.js"),
    import("../components/summary.js"),
    import("../components/frontmatter.js"),
  ]);
  const installed = await collectInstalledComponents({ roots: world.roots, cwd: world.cwd, projectTrusted, tools });

  // Context: every tool xcsh loads, plus the listed components of plugins xcsh loads.
  const toolTokens = tools.reduce((n, t) => n + (toolCost(t.name, t.description, t.parameters).alwaysOn ?? 0), 0);
  const listed = installed.flatMap((p) => (p.enabled ? p.components.filter((c) => c.loadedByXcsh && c.kind !== "tool") : []));
  const listedTokens = listed.reduce((n, c) => n + (c.cost.alwaysOn ?? 0), 0);
  const total = toolTokens + listedTokens;
  const heaviest = installed
    .filter((p) => p.cost.alwaysOnForXcsh > 0)
    .sort((a, b) => b.cost.alwaysOnForXcsh - a.cost.alwaysOnForXcsh)
    .slice(0, 3)
    .map((p) => `${p.id} ${formatTokens(p.cost.alwaysOnForXcsh)}`);
  const message = `${formatTokens(total)} tokens of context in every session (${tools.length} tool${tools.length === 1 ? "" : "s"} ${formatTokens(toolTokens)}, ${listed.length} skill/command/agent listing${listed.length === 1 ? "" : "s"} ${formatTokens(listedTokens)})${unvalidated ? `, not counting ${unvalidated} tool entr${unvalidated === 1 ? "y" : "ies"} never validated` : ""}${heaviest.length ? `; most: ${heaviest.join(", ")}` : ""}`;
  if (total > settings.contextWarnTokens) {
    area.problem("components:context", "warn", `${message}: more than contextWarnTokens (${settings.contextWarnTokens})`, {
      hint: "Disable plugins you do not use in every session (`xcsh-tools disable <plugin>`), or raise the setting contextWarnTokens. `xcsh-tools show <plugin>` lists what each component costs.",
      manual: "which plugins to keep is the user's choice",
    });
  } else area.ok("components:context", message);

  // Agents: the host keeps the first of a name.
  const agents: { name: string; file: string; where: string }[] = [];
  for (const { dir, where } of ownAgentDirs(world)) {
    for (const file of mdFiles(dir)) {
      let name = path.basename(file, ".md");
      try {
        const fm = readFrontmatter(readTextBounded(file) ?? "");
        if (typeof fm.data.name === "string" && fm.data.name.trim()) name = fm.data.name.trim();
      } catch {
        // An unreadable agent file: the host skips it too.
      }
      agents.push({ name, file, where });
    }
  }
  const xcshPlugins = installed.filter((p) => p.rootKind === "xcsh-marketplace" && p.enabled && !p.problem);
  const ordered = [...xcshPlugins.filter((p) => p.scope === "project"), ...xcshPlugins.filter((p) => p.scope === "user")];
  for (const p of ordered) for (const c of p.components) if (c.kind === "agent" && c.loadedByXcsh) agents.push({ name: c.declaredName ?? c.name, file: c.file, where: `plugin ${p.id}` });
  // Skills and commands: `plugin:name` across plugins.
  const named: { key: string; kind: string; file: string; where: string }[] = [];
  for (const p of ordered) for (const c of p.components) if ((c.kind === "skill" || c.kind === "command") && c.loadedByXcsh) named.push({ key: `${p.name}:${c.declaredName ?? c.name}`, kind: c.kind, file: c.file, where: `plugin ${p.id}` });

  let clashes = 0;
  const report = (kind: string, name: string, list: { file: string; where: string }[]) => {
    const [winner, ...hidden] = list;
    clashes++;
    area.problem(`components:conflict:${kind}:${name}`, "warn", `${kind} "${name}" is defined ${list.length} times: the host uses ${winner!.file} (${winner!.where}) and hides ${hidden.map((h) => `${h.file} (${h.where})`).join(", ")}`, {
      hint: `Rename or remove the ${kind} you do not want, or uninstall/disable the plugin that brings it.`,
      manual: "which one to keep is the user's choice",
    });
  };
  const group = <T extends { file: string; where: string }>(items: T[], key: (t: T) => string) => {
    const map = new Map<string, T[]>();
    for (const item of items) map.set(key(item), [...(map.get(key(item)) ?? []), item]);
    return [...map].filter(([, list]) => list.length > 1);
  };
  for (const [name, list] of group(agents, (a) => a.name)) report("agent", name, list);
  for (const [key, list] of group(named, (n) => `${n.kind}\0${n.key}`)) report(list[0]!.kind, key.split("\0")[1]!, list);
  if (clashes === 0) area.ok("components:conflicts", `${agents.length} agent${agents.length === 1 ? "" : "s"}, ${named.length} plugin skill${named.length === 1 ? "" : "s"}/command${named.length === 1 ? "" : "s"}: no name conflicts`);
  return area;
}
