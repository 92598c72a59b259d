/**
 * Marketplace fixtures: catalogs in xcsh and Claude Code formats, plugin folders with tool
 * modules, and the engine context for a temp world (isolated git, loopback-only timeouts).
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { isProjectTrustedByUser, trustWorldOf } from "../../src/core/trust.js";
import type { MarketplaceContext } from "../../src/marketplace/index.js";
import { isolatedGitEnv } from "./git-remote.js";
import type { TmpWorld } from "./tmp-home.js";

/** Source of a `.js` tool module whose factory returns one tool named `name` (text `text`). */
export function toolModule(name: string, text = name): string {
  return `export default function factory() {
  return {
    name: ${JSON.stringify(name)},
    label: ${JSON.stringify(name)},
    description: "fixture tool " + ${JSON.stringify(name)},
    parameters: { type: "object", properties: {} },
    async execute() {
      return { content: [{ type: "text", text: ${JSON.stringify(text)} }] };
    },
  };
}
`;
}

/** Files of a plugin folder at `prefix`: `tools/<tool>.mjs` and a plugin.json in `flavour`'s folder. */
export function pluginFiles(prefix: string, name: string, tools: string[], options: { version?: string; flavour?: "xcsh" | "claude"; text?: string } = {}): Record<string, string | object> {
  const files: Record<string, string | object> = {};
  const folder = options.flavour === "claude" ? ".claude-plugin" : ".xcsh-plugin";
  files[path.posix.join(prefix, folder, "plugin.json")] = { name, ...(options.version ? { version: options.version } : {}), description: `the ${name} plugin` };
  for (const tool of tools) files[path.posix.join(prefix, "tools", `${tool}.mjs`)] = toolModule(tool, options.text ?? tool);
  return files;
}

/** A catalog document. */
export function catalog(name: string, plugins: Record<string, unknown>[], extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { name, owner: { name: "Fixture Owner", email: "owner@example.com" }, ...extra, plugins };
}

/** The catalog file's path in a repository of `flavour`. */
export function catalogPath(flavour: "xcsh" | "claude" = "xcsh"): string {
  return flavour === "claude" ? ".claude-plugin/marketplace.json" : ".xcsh-plugin/marketplace.json";
}

/** What `writeFolderMarketplace` writes: the marketplace's name and its one plugin. */
export interface FolderMarketplace {
  /** The marketplace's name in its catalog. */
  name: string;
  /** The plugin it offers, from `./plugins/<plugin>` (default `hello`). */
  plugin?: string;
  /** Tool names of the plugin: one module each. */
  tools: string[];
  /** Fields of the catalog entry after `name` and `source` (version, description, keywords...). */
  entry?: Record<string, unknown>;
  /** Catalog and plugin.json in xcsh's folders (default) or Claude Code's. */
  flavour?: "xcsh" | "claude";
}

/**
 * A local folder marketplace at `root`: the catalog offering one plugin and that plugin's folder
 * (`pluginFiles`), written as a world's `write` writes files. Returns `root`, ready for
 * `marketplace add`.
 */
export async function writeFolderMarketplace(root: string, market: FolderMarketplace): Promise<string> {
  const plugin = market.plugin ?? "hello";
  const files: Record<string, string | object> = {
    [catalogPath(market.flavour)]: catalog(market.name, [{ name: plugin, source: `./plugins/${plugin}`, ...market.entry }]),
    ...pluginFiles(`plugins/${plugin}`, plugin, market.tools, market.flavour ? { flavour: market.flavour } : {}),
  };
  for (const [rel, content] of Object.entries(files)) {
    const file = path.join(root, rel);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, typeof content === "string" ? content : `${JSON.stringify(content, null, 2)}\n`);
  }
  return root;
}

/** The engine context of a temp world. */
export function marketplaceCtx(w: TmpWorld, extra: Partial<MarketplaceContext> = {}): MarketplaceContext {
  const roots = { home: w.home, xcshHome: w.xcshHome };
  return {
    roots,
    cwd: w.cwd,
    env: isolatedGitEnv(w.home),
    gitTimeoutMs: 30_000,
    fetchTimeoutMs: 5_000,
    lockWaitMs: 5_000,
    // The world's own answer, as the CLI reads it: trusted only where the test wrote a trust record.
    projectTrusted: isProjectTrustedByUser(w.cwd, trustWorldOf(roots)),
    ...extra,
  };
}

/**
 * A repository shaped like Anthropic's official Claude Code catalog (late 2026), written fresh:
 * a reserved name, `$schema`, `renames`, in-repo plugins under `./plugins/` (some without
 * plugin.json, with inline `lspServers` and `strict: false`), `git-subdir` and `url` entries
 * (one `url` with a `path`), `displayName`, `tags`, an entry `metadata`, `relevance` and
 * `defaultEnabled`, and `allowCrossMarketplaceDependenciesOn`. The remote entries point at
 * `remoteUrl` (a bare repo of the test, or any https URL when only validated).
 */
export function officialShapedMarketplace(remoteUrl: string, sha: string): Record<string, string | object> {
  const files: Record<string, string | object> = {};
  files[catalogPath("claude")] = {
    $schema: "https://anthropic.com/claude-code/marketplace.schema.json",
    name: "claude-plugins-official",
    description: "Directory of fixture plugins",
    owner: { name: "Fixture Owner", email: "owner@example.com" },
    renames: { "old-review": "code-review", "site.builder": "site-builder" },
    allowCrossMarketplaceDependenciesOn: ["fixture-community"],
    plugins: [
      { name: "code-review", description: "Reviews code", author: { name: "Fixture" }, source: "./plugins/code-review", category: "development", homepage: "https://example.com/code-review" },
      { name: "clangd-lsp", description: "C/C++ language server", version: "1.0.0", source: "./plugins/clangd-lsp", category: "development", strict: false, lspServers: { clangd: { command: "clangd", args: ["--background-index"], extensionToLanguage: { ".c": "c" } } } },
      { name: "site-builder", displayName: "Site Builder", description: "Builds sites", category: "deployment", tags: ["web"], relevance: 0.8, metadata: { featured: true }, defaultEnabled: false, source: { source: "url", url: remoteUrl, path: "plugins/site-builder", sha } },
      { name: "api-security", description: "Audits APIs", category: "security", source: { source: "git-subdir", url: remoteUrl, path: "plugins/api-security", ref: "main", sha } },
      { name: "whole-repo", description: "A plugin that is a whole repository", source: { source: "url", url: remoteUrl, sha } },
    ],
  };
  files["plugins/code-review/.claude-plugin/plugin.json"] = { name: "code-review", displayName: "Code Review", description: "Reviews code", author: { name: "Fixture" }, defaultEnabled: true, channels: { stable: {} } };
  files["plugins/code-review/commands/review.md"] = "---\ndescription: Review the current change\n---\nReview the diff.\n";
  files["plugins/code-review/agents/reviewer.md"] = "---\nname: reviewer\ndescription: Reviews code\n---\nYou review code.\n";
  // No plugin.json: Claude Code's defaults (the LSP server is declared inline in the catalog).
  files["plugins/clangd-lsp/README.md"] = "clangd for C and C++\n";
  files["plugins/clangd-lsp/LICENSE"] = "MIT\n";
  return files;
}

/** The plugin repository the official-shaped catalog's remote entries point at. */
export function officialShapedPluginRepo(): Record<string, string | object> {
  return {
    "plugins/site-builder/skills/deploy/SKILL.md": "---\nname: deploy\ndescription: Deploy the site\n---\nDeploy it.\n",
    "plugins/site-builder/tools/site_tool.mjs": toolModule("site_tool", "site v1"),
    "plugins/api-security/.claude-plugin/plugin.json": { name: "api-security", version: "1.5.5" },
    "plugins/api-security/skills/audit/SKILL.md": "---\nname: audit\ndescription: Audit an API\n---\nAudit.\n",
    "skills/whole/SKILL.md": "---\nname: whole\ndescription: The whole repository\n---\nWhole.\n",
  };
}

/** A catalog shaped like wshobson/agents: every entry in-repo with version, author, license, category. */
export function workflowsShapedMarketplace(): Record<string, string | object> {
  const files: Record<string, string | object> = {};
  const names = ["documentation-standards", "agent-orchestration"];
  files[catalogPath("claude")] = {
    name: "fixture-workflows",
    owner: { name: "Fixture Owner", email: "owner@example.com", url: "https://example.com" },
    metadata: { description: "Workflow plugins", version: "1.7.1" },
    plugins: names.map((name) => ({ name, source: `./plugins/${name}`, description: `the ${name} plugin`, version: "1.0.1", author: { name: "Fixture", url: "https://example.com" }, homepage: "https://example.com", license: "MIT", category: "documentation" })),
  };
  for (const name of names) {
    files[`plugins/${name}/.claude-plugin/plugin.json`] = { name, version: "1.0.1", description: `the ${name} plugin`, author: { name: "Fixture" }, license: "MIT" };
    files[`plugins/${name}/agents/helper.md`] = "---\nname: helper\ndescription: Helps\n---\nHelp.\n";
    files[`plugins/${name}/skills/guide/SKILL.md`] = "---\nname: guide\ndescription: Guides\n---\nGuide.\n";
  }
  return files;
}
