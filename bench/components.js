#!/usr/bin/env node
/**
 * Component benchmarks (issue 31): `xcsh-tools list --json` and `xcsh-tools show <plugin> --json`
 * with 100 installed marketplace plugins of mixed components (skills, commands, agents,
 * hooks.json, .mcp.json, .lsp.json, bin/), and `tools --json` (the boot-index query) beside them,
 * against `node -e 0` (whole processes, median of RUNS, interleaved).
 * Runs the built CLI (bin/xcsh-tools.js → dist/): run `npm run build` first.
 *
 *   node bench/components.js
 *   RUNS=9 PLUGINS=300 node bench/components.js
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const RUNS = Number(process.env.RUNS ?? 5);
const PLUGINS = Number(process.env.PLUGINS ?? 100);
const R = "$" + "{CLAUDE_PLUGIN_ROOT}";

function put(file, content) {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, typeof content === "string" ? content : JSON.stringify(content));
}

function writePlugin(root, name, i) {
  put(path.join(root, ".claude-plugin/plugin.json"), { name, version: "1.0.0", description: `plugin ${i}` });
  for (let s = 0; s < 1 + (i % 4); s++) put(path.join(root, `skills/skill-${s}/SKILL.md`), `---\nname: skill-${s}\ndescription: Skill ${s} of ${name}, used when the task needs it\n---\n${"Instructions. ".repeat(200)}\n`);
  if (i % 2 === 0) put(path.join(root, "commands/run.md"), "---\ndescription: Run it\n---\nDo it.\n");
  if (i % 3 === 0) put(path.join(root, "agents/helper.md"), `---\nname: helper-${i}\ndescription: Helps with ${name}\n---\nYou help.\n`);
  if (i % 2 === 1) put(path.join(root, "hooks/hooks.json"), { hooks: { PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: `${R}/scripts/check.sh`, timeout: 10 }] }], SessionStart: [{ hooks: [{ type: "command", command: "echo hi" }] }] } });
  put(path.join(root, "scripts/check.sh"), "#!/bin/sh\n");
  if (i % 5 === 0) put(path.join(root, ".mcp.json"), { mcpServers: { srv: { command: "node", args: [`${R}/scripts/check.sh`], env: { TOKEN: "x" } } } });
  if (i % 10 === 0) put(path.join(root, ".lsp.json"), { go: { command: "gopls", extensionToLanguage: { ".go": "go" } } });
  if (i % 7 === 0) put(path.join(root, "bin/tool"), "#!/bin/sh\n");
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/**
 * Time each of `commands` RUNS times, interleaved (one of each per round), so that a busy machine
 * slows them alike; returns the median per command.
 */
function timeInterleaved(commands, env, cwd) {
  const runs = commands.map(() => []);
  for (let r = 0; r < RUNS; r++) {
    commands.forEach((args, i) => {
      const start = process.hrtime.bigint();
      const out = spawnSync(process.execPath, args, { env, cwd, encoding: "utf8" });
      runs[i].push(Number(process.hrtime.bigint() - start) / 1e6);
      if (out.status !== 0) throw new Error(`${args.join(" ")} failed: ${out.stderr}`);
    });
  }
  return runs.map(median);
}

const root = mkdtempSync(path.join(os.tmpdir(), "xcsh-tools-bench-components-"));
try {
  const home = path.join(root, "home");
  const xcshHome = path.join(home, ".xcsh");
  const cwd = path.join(root, "project");
  mkdirSync(cwd, { recursive: true });
  const plugins = {};
  for (let i = 0; i < PLUGINS; i++) {
    const name = `plugin-${i}`;
    const dir = path.join(xcshHome, "plugins", "cache", "plugins", `bench___${name}___1.0.0`);
    writePlugin(dir, name, i);
    plugins[`${name}@bench`] = [{ scope: "user", installPath: dir, version: "1.0.0" }];
  }
  put(path.join(xcshHome, "plugins", "installed_plugins.json"), { version: 2, plugins });
  const env = { PATH: process.env.PATH, HOME: home, XCSH_HOME: xcshHome, NO_COLOR: "1" };
  const cli = path.join(repo, "bin", "xcsh-tools.js");
  // `tools --json` is the query a host's start-up answers from the boot index: the plugins'
  // other components must not slow it.
  const [floor, list, show, tools] = timeInterleaved([["-e", "0"], [cli, "list", "--json"], [cli, "show", "plugin-42@bench", "--json"], [cli, "tools", "--json"]], env, cwd);
  console.log(`components: ${PLUGINS} marketplace plugins of mixed components, median of ${RUNS} (interleaved)`);
  console.log(`  node -e 0          ${floor.toFixed(0)} ms`);
  console.log(`  list --json        ${list.toFixed(0)} ms  (${(list / floor).toFixed(1)}x node -e 0)`);
  console.log(`  show <one> --json  ${show.toFixed(0)} ms  (${(show / floor).toFixed(1)}x node -e 0)`);
  console.log(`  tools --json       ${tools.toFixed(0)} ms  (${(tools / floor).toFixed(1)}x node -e 0)`);
} finally {
  rmSync(root, { recursive: true, force: true });
}
