/**
 * The install half of `npm run conformance:record` (issue 45 point 5): what the pinned Claude Code
 * installs from a catalog entry, recorded into test/fixtures/conformance/installs.json so that
 * test/integration/conformance-install.test.ts compares our installs with it without Claude Code.
 *
 * Each case (install-cases.mjs says the format) is made real in a scratch folder; Claude Code runs
 * under a HOME of its own per case (logged out: a local marketplace add and install need no
 * login), `claude plugin marketplace add <catalog>` then `claude plugin install <id>` for each id,
 * and `claude plugin details <id>` where the case compares components. Its network is loopback
 * only: catalogs are local folders and git repositories are served from 127.0.0.1.
 * Recorded per case: each step's outcome (ok, and the message with the machine's folders taken
 * out, for review), and per installed id the version, the commit, the scope, whether it is enabled
 * (settings' enabledPlugins), `auto` (installed as a dependency) and the files of the installed folder.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { startGitHttpServer } from "../lib/git-http.mjs";
import { installCaseIds, installedShape, materializeInstallCase, scrubText } from "./install-cases.mjs";

/** The component names `claude plugin details` lists: skills and LSP servers (what a strict:false entry may declare). */
function detailsOf(text) {
  const list = (label) => {
    const m = new RegExp(`^\\s*${label} \\(\\d+\\)\\s*(.*)$`, "m").exec(text);
    return m ? m[1].split(",").map((s) => s.replace(/\s*\(.*\)\s*$/, "").trim()).filter(Boolean).sort() : [];
  };
  return { skills: list("Skills"), lspServers: list("LSP servers") };
}

/**
 * Run the pinned Claude Code (`wrapper`) with `args` under `home`. Asynchronous: the git server
 * answering its clones runs in this process.
 */
function runner(wrapper, envOf) {
  return (home, args) =>
    new Promise((resolve) => {
      const child = spawn(process.execPath, [wrapper, ...args], { env: envOf(home), stdio: ["ignore", "pipe", "pipe"] });
      let stdout = "";
      let stderr = "";
      child.stdout.setEncoding("utf8").on("data", (c) => (stdout += c));
      child.stderr.setEncoding("utf8").on("data", (c) => (stderr += c));
      const timer = setTimeout(() => child.kill("SIGKILL"), 120_000);
      child.on("close", (status) => {
        clearTimeout(timer);
        resolve({ status, stdout, stderr });
      });
    });
}

async function recordCase(id, casesDir, run, gitRoot, gitUrl) {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), `cc-install-${id}-`));
  const home = path.join(work, "home");
  fs.mkdirSync(home);
  try {
    const { spec, catalog, shas } = materializeInstallCase(path.join(casesDir, id), path.join(work, "case"), gitRoot, gitUrl);
    const places = [[home, "<home>"], [path.join(work, "case"), "<work>"], [gitUrl, "<git>"]];
    const steps = [];
    const step = async (label, args) => {
      const r = await run(home, args);
      steps.push({ step: label, ok: r.status === 0, message: scrubText(`${r.stdout ?? ""}${r.stderr ?? ""}`, places) });
      return r;
    };
    await step("marketplace add", ["plugin", "marketplace", "add", catalog]);
    for (const plugin of spec.install ?? []) await step(`install ${plugin}`, ["plugin", "install", plugin]);
    const read = (file) => (fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, "utf8")) : undefined);
    const registry = read(path.join(home, ".claude", "plugins", "installed_plugins.json"));
    const enabled = read(path.join(home, ".claude", "settings.json"))?.enabledPlugins ?? {};
    const plugins = installedShape(registry, shas, (pid) => enabled[pid] === true);
    const components = {};
    for (const plugin of spec.components ?? []) components[plugin] = detailsOf((await run(home, ["plugin", "details", plugin])).stdout ?? "");
    return { steps, plugins, ...(spec.components ? { components } : {}) };
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

/**
 * Record every install case with the pinned Claude Code (`wrapper`, run with `envOf(home)`: logged
 * out, a fresh HOME) into `<fixturesDir>/installs.json`; returns the recorded document.
 */
export async function recordInstalls({ fixturesDir, version, wrapper, envOf, canonical }) {
  const runClaude = runner(wrapper, envOf);
  const casesDir = path.join(fixturesDir, "install");
  const gitRoot = fs.mkdtempSync(path.join(os.tmpdir(), "cc-install-git-"));
  const server = await startGitHttpServer(gitRoot);
  try {
    const cases = {};
    for (const id of installCaseIds(casesDir)) cases[id] = await recordCase(id, casesDir, runClaude, gitRoot, server.url);
    const file = path.join(fixturesDir, "installs.json");
    const before = fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, "utf8")) : { cases: {} };
    const after = { claudeCode: version, cases };
    fs.writeFileSync(file, canonical(after));
    for (const id of Object.keys(cases)) {
      if (JSON.stringify(canonical(before.cases?.[id] ?? null)) !== JSON.stringify(canonical(cases[id]))) console.log(`~ install ${id}: changed`);
    }
    console.error(`Recorded ${Object.keys(cases).length} install cases with Claude Code ${version} into ${path.relative(process.cwd(), file)}.`);
    return after;
  } finally {
    await server.close();
    fs.rmSync(gitRoot, { recursive: true, force: true });
  }
}
