#!/usr/bin/env node
/**
 * Component benchmarks (issue 31): `xcsh-tools list --json` and `xcsh-tools show <plugin> --json`
 * with 100 installed marketplace plugins of mixed components (skills, commands, agents,
 * hooks.json, .mcp.json, .lsp.json, bin/), and `tools --json` (the boot-index query) beside them,
 * against `<runtime> -e 0` (whole processes, wall and CPU, median of RUNS, interleaved), under
 * every runtime bench/lib/runtimes.js finds, for the work tree's build and any BENCH_SOURCE
 * revision (bench/lib/build.js), each build in a world of its own.
 *
 *   node bench/components.js
 *   RUNS=9 PLUGINS=300 BENCH_RUNTIMES=node22 BENCH_SOURCE=HEAD~3 node bench/components.js
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { buildAll } from "./lib/build.js";
import { findRuntimes } from "./lib/runtimes.js";
import { timeProcessClocks } from "./lib/time.js";

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

/** A world with PLUGINS marketplace plugins installed for the user. */
function writeWorld(root) {
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
  return { cwd, env: { PATH: process.env.PATH, HOME: home, XCSH_HOME: xcshHome, NO_COLOR: "1" } };
}

// `tools --json` is the query a host's start-up answers from the boot index: the plugins'
// other components must not slow it.
const COMMANDS = { "list --json": ["list", "--json"], "show <one> --json": ["show", "plugin-42@bench", "--json"], "tools --json": ["tools", "--json"] };

const builds = buildAll("xcsh-tools-bench-components");
const root = mkdtempSync(path.join(os.tmpdir(), "xcsh-tools-bench-components-"));
try {
  const worlds = builds.map((_, i) => writeWorld(path.join(root, `build-${i}`)));
  console.log(`components: ${PLUGINS} marketplace plugins of mixed components, median of ${RUNS} (interleaved), wall / cpu`);
  for (const runtime of findRuntimes()) {
    const samples = {};
    const add = (key, r) => (samples[key] ??= { wall: [], cpu: [] }) && (samples[key].wall.push(r.wall), samples[key].cpu.push(r.cpu ?? NaN));
    for (let run = 0; run < RUNS; run++) {
      add("empty", timeProcessClocks(runtime.command, ["-e", "0"], { cwd: worlds[0].cwd, env: worlds[0].env }));
      builds.forEach((b, i) => {
        for (const [name, args] of Object.entries(COMMANDS)) add(`${name}${i}`, timeProcessClocks(runtime.command, [b.bin, ...args], { cwd: worlds[i].cwd, env: worlds[i].env }));
      });
    }
    const m = (key) => ({ wall: median(samples[key].wall), cpu: median(samples[key].cpu) });
    const empty = m("empty");
    console.log(`  ${runtime.label.padEnd(14)} -e 0 ${empty.wall.toFixed(0)} / ${empty.cpu.toFixed(0)} ms`);
    builds.forEach((b, i) => {
      const cells = Object.keys(COMMANDS).map((name) => {
        const c = m(`${name}${i}`);
        return `${name} ${c.wall.toFixed(0)} / ${c.cpu.toFixed(0)} ms (${(c.wall / empty.wall).toFixed(1)}x / ${(c.cpu / empty.cpu).toFixed(1)}x)`;
      });
      console.log(`      ${b.label.padEnd(22)} ${cells.join("   ")}`);
    });
  }
} finally {
  rmSync(root, { recursive: true, force: true });
}
