/**
 * Plugin folders with every component kind, written for these tests and modelled on the layouts
 * of public Claude Code marketplaces (skills/<name>/SKILL.md, commands/*.md, agents/*.md,
 * hooks/hooks.json, .mcp.json, .lsp.json, monitors, bin/, output-styles/), valid and broken.
 */
import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";

function put(root: string, rel: string, content: string | object): void {
  const file = path.join(root, rel);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, typeof content === "string" ? content : JSON.stringify(content, null, 2));
}

const R = "$" + "{CLAUDE_PLUGIN_ROOT}";

/** A valid plugin with one of every kind (two skills, four hooks). */
export function writeFullPlugin(root: string, name = "kitchen-sink"): void {
  put(root, ".claude-plugin/plugin.json", { name, version: "1.0.0", description: "every component kind" });
  put(root, "skills/review/SKILL.md", "---\nname: review\ndescription: Review the current diff for bugs\n---\n# Review\n\nRead the diff and list problems.\n");
  put(root, "skills/explain/SKILL.md", "---\ndescription: Explain a piece of code\nallowed-tools: [Read, Grep]\n---\nExplain it plainly.\n");
  put(root, "commands/about.md", "---\ndescription: Say what this plugin does\nargument-hint: <topic>\n---\nDescribe the plugin.\n");
  put(root, "agents/security-reviewer.md", "---\nname: security-reviewer\ndescription: Reviews changes for security problems\ntools: Read, Grep\nmodel: sonnet\n---\nYou are a careful security reviewer.\n");
  put(root, "output-styles/terse.md", "---\nname: terse\ndescription: Short answers\n---\nAnswer in one sentence.\n");
  put(root, "hooks/hooks.json", {
    description: "format after edits",
    hooks: {
      PostToolUse: [{ matcher: "Write|Edit", hooks: [{ type: "command", command: `python3 ${R}/scripts/format.py`, timeout: 30 }] }],
      SessionStart: [{ hooks: [{ type: "command", command: `${R}/scripts/hello.sh` }] }],
      UserPromptSubmit: [{ hooks: [{ type: "prompt", prompt: "Is this safe?" }] }],
    },
  });
  put(root, "hooks/pre/bash.sh", "#!/bin/sh\nexit 0\n");
  put(root, "scripts/format.py", "print('ok')\n");
  put(root, "scripts/hello.sh", "#!/bin/sh\necho hi\n");
  put(root, ".mcp.json", { mcpServers: { local: { command: `${R}/servers/mcp.js`, args: ["--root", R], env: { API_TOKEN: "${API_TOKEN}" } }, remote: { type: "http", url: "https://mcp.example.test/mcp", headers: { Authorization: "Bearer ${TOKEN}" } } } });
  put(root, "servers/mcp.js", "// server\n");
  put(root, ".lsp.json", { go: { command: "gopls", args: ["serve"], extensionToLanguage: { ".go": "go" } } });
  put(root, "monitors/monitors.json", [{ name: "log-watch", command: `tail -F ${R}/scripts/hello.sh`, description: "Watch the log" }]);
  put(root, "bin/hello-plugin", "#!/bin/sh\necho hello\n");
  chmodSync(path.join(root, "bin/hello-plugin"), 0o755);
  put(root, "tools/greet.ts", "export default () => ({ name: 'greet', description: 'greet', parameters: { type: 'object', properties: {} }, execute: async () => ({ content: [] }) });\n");
}

/**
 * A marketplace install of `writeFullPlugin` at `<xcshHome>/plugins/cache/...` recorded in the
 * user's or the project's installed_plugins.json, with a tool module that throws if imported (so a
 * test sees that nothing imported plugin code). Returns the plugin root.
 */
export function installFullPlugin(w: { xcshHome: string; cwd: string }, scope: "user" | "project", name: string): string {
  const root = path.join(w.xcshHome, "plugins", "cache", "plugins", `mkt___${name}___1.0.0`);
  writeFullPlugin(root, name);
  writeFileSync(path.join(root, "tools", "greet.ts"), "throw new Error('imported');\n");
  const registry = scope === "user" ? path.join(w.xcshHome, "plugins", "installed_plugins.json") : path.join(w.cwd, ".xcsh", "plugins", "installed_plugins.json");
  mkdirSync(path.dirname(registry), { recursive: true });
  writeFileSync(registry, JSON.stringify({ version: 2, plugins: { [`${name}@mkt`]: [{ scope, installPath: root, version: "1.0.0" }] } }));
  return root;
}

/** A plugin whose manifest paths replace and add to the defaults. */
export function writeManifestPathsPlugin(root: string): void {
  put(root, ".claude-plugin/plugin.json", {
    name: "custom-paths",
    commands: ["./custom/cmd.md"],
    agents: "./custom/agents/",
    skills: "./custom/skills/",
    hooks: { PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "echo inline" }] }] },
    mcpServers: { inline: { command: "node", args: ["server.js"] } },
    lspServers: "./config/lsp.json",
  });
  put(root, "commands/ignored.md", "---\ndescription: replaced by the manifest\n---\n");
  put(root, "custom/cmd.md", "---\ndescription: custom command\n---\nbody\n");
  put(root, "custom/agents/helper.md", "---\nname: helper\ndescription: helps\n---\nbody\n");
  put(root, "custom/skills/deep/SKILL.md", "---\nname: deep\ndescription: deep skill\n---\nbody\n");
  put(root, "skills/ignored/SKILL.md", "---\nname: ignored\ndescription: replaced\n---\n");
  put(root, "config/lsp.json", { py: { command: "pyright-langserver", args: ["--stdio"], extensionToLanguage: { ".py": "python" } } });
}

/** A plugin with one broken thing of each kind. */
export function writeBrokenPlugin(root: string, outside: string): void {
  put(root, ".claude-plugin/plugin.json", { name: "broken", agents: "../outside-agents/", commands: ["./missing.md"] });
  put(root, "skills/bad-yaml/SKILL.md", "---\nname: [unclosed\ndescription: x\n---\nbody\n");
  put(root, "skills/dup-a/SKILL.md", "---\nname: same\ndescription: a\n---\n");
  put(root, "skills/dup-b/SKILL.md", "---\nname: same\ndescription: b\n---\n");
  put(root, "skills/no-close/SKILL.md", "---\nname: no-close\n");
  put(root, "hooks/hooks.json", {
    hooks: {
      PreToolUze: [{ hooks: [{ type: "command", command: "true" }] }],
      PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command" }, { type: "shell", command: "x" }, { type: "command", command: `${R}/../escape.sh` }, { type: "command", command: `${R}/scripts/missing.sh`, timeout: -1 }] }],
    },
  });
  put(root, ".mcp.json", { mcpServers: { nothing: { args: ["x"] }, remote: { type: "sse" } } });
  put(root, ".lsp.json", { go: { command: "gopls" } });
  mkdirSync(outside, { recursive: true });
  writeFileSync(path.join(outside, "SKILL.md"), "---\nname: leaked\ndescription: outside\n---\n");
  symlinkSync(outside, path.join(root, "skills", "linked"));
}
