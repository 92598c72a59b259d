/**
 * The "components" area: what installed plugins bring besides tools, and what it costs.
 *
 * Context: the always-on tokens of the whole installation as xcsh loads it — every tool xcsh
 * loads (name, description and parameter schema, from the boot index; a tool never validated is
 * counted as unknown) plus the skills, commands and agents xcsh lists from plugins (name and
 * description) — against the `contextWarnTokens` setting (src/components/cost.ts has the method).
 *
 * Conflicts: agents are not namespaced by the host (its task tool keeps the first agent of a
 * name: the project's own agent folders, the user's, then plugin `agents/` folders, project
 * installs first); skills and commands of marketplace plugins are `plugin:name`, so they clash
 * only when two installed plugins share a name (from two marketplaces). Each clash says which
 * file the host uses and which it hides. Nothing here imports plugin code.
 */
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { xcshPaths } from "../core/paths.js";
import { AreaFindings, type DoctorWorld } from "./world.js";

/** The user's and the project's own agent folders, in the host's order (project first). */
function ownAgentDirs(world: DoctorWorld): { dir: string; where: string }[] {
  const dirs: { dir: string; where: string }[] = [];
  if (world.projectTrusted) {
    for (const d of [".xcsh/agents", ".pi/agents", ".claude/agents"]) dirs.push({ dir: path.join(world.cwd, d), where: `the project's ${d}` });
  }
  const root = xcshPaths(world.roots).root;
  dirs.push({ dir: path.join(root, "agent", "agents"), where: "the user's ~/.xcsh/agent/agents" });
  dirs.push({ dir: path.join(root, "agents"), where: "the user's ~/.xcsh/agents" });
  dirs.push({ dir: path.join(world.roots.home, ".claude", "agents"), where: "the user's ~/.claude/agents" });
  return dirs;
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
        const fm = readFrontmatter(readFileSync(file, "utf8"));
        if (typeof fm.data.name === "string" && fm.data.name.trim()) name = fm.data.name.trim();
      } catch {
        // An unreadable agent file: the host skips it too.
      }
      agents.push({ name, file, where });
    }
  }
  const xcshPlugins = installed.filter((p) => p.rootKind === "xcsh-marketplace" && p.enabled && !p.problem);
  const ordered = [...xcshPlugins.filter((p) => p.scope === "project"), ...xcshPlugins.filter((p) => p.scope === "user")];
  for (const p of ordered) for (const c of p.components) if (c.kind === "agent" && c.loadedByXcsh) agents.push({ name: c.name, file: c.file, where: `plugin ${p.id}` });
  // Skills and commands: `plugin:name` across plugins.
  const named: { key: string; kind: string; file: string; where: string }[] = [];
  for (const p of ordered) for (const c of p.components) if ((c.kind === "skill" || c.kind === "command") && c.loadedByXcsh) named.push({ key: `${p.name}:${c.name}`, kind: c.kind, file: c.file, where: `plugin ${p.id}` });

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
