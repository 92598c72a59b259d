/**
 * The built npm client defers two eager requires of npm's libraries (src/plugins/npm-client.ts):
 * loading pacote and arborist must load neither sigstore nor @npmcli/run-script, and the first
 * use of their exports (reading sigstore's, calling run-script) must reach the real module,
 * under every runtime the CLI runs on.
 */
import { spawnSync } from "node:child_process";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { beforeAll, describe, expect } from "vitest";
import { buildDist, REPO } from "../helpers/build-dist.js";
import { requireRuntime, runtimeIt, runtimes, skipNote } from "../helpers/runtimes.js";

const CLIENT = pathToFileURL(path.join(REPO, "dist", "plugins", "npm-client.js")).href;

// Runs in the child: loads pacote and arborist through our client, then reports what the CommonJS
// cache holds (sigstore's own dependencies, run-script's other files) before and after the first
// touch of each module's exports.
const PROBE = `
import { createRequire } from "node:module";
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
const { loadPacote, loadArborist } = await import(${JSON.stringify(CLIENT)});
const pacote = await loadPacote();
await loadArborist();
const req = createRequire(createRequire(${JSON.stringify(path.join(REPO, "package.json"))}).resolve("pacote"));
const dependencyFiles = () => Object.keys(req.cache).filter((f) => /[\\\\/]node_modules[\\\\/](@sigstore|@tufjs|tuf-js)[\\\\/]/.test(f)).length;
const before = dependencyFiles();
const sigstore = req("sigstore");
const verifyType = typeof sigstore.verify;
const listsVerify = Object.keys(sigstore).includes("verify");
const after = dependencyFiles();
const runScriptMain = req.resolve("@npmcli/run-script");
const runScriptFiles = () => Object.keys(req.cache).filter((f) => f.startsWith(path.dirname(runScriptMain)) && f !== runScriptMain).length;
const runScriptBefore = runScriptFiles();
const runScript = req("@npmcli/run-script");
const runScriptType = typeof runScript;
const folder = mkdtempSync(path.join(os.tmpdir(), "xcsh-tools-run-script-"));
const ran = await runScript({ event: "probe", path: folder, pkg: { name: "probe", version: "1.0.0", scripts: { probe: "echo ran" } }, stdio: "pipe" });
console.log(JSON.stringify({ manifest: typeof pacote.manifest, before, verifyType, listsVerify, after, runScriptBefore, runScriptType, ran: { code: ran.code, stdout: String(ran.stdout).trim() }, runScriptAfter: runScriptFiles() }));
`;

beforeAll(async () => {
  await buildDist();
}, 180_000);

describe("sigstore and run-script are loaded on first use, not with pacote and arborist", () => {
  for (const runtime of runtimes()) {
    runtimeIt(runtime)(`${runtime.label}${skipNote(runtime)}`, { timeout: 60_000 }, () => {
      const command = requireRuntime(runtime);
      const args = runtime.id === "bun" ? ["-e", PROBE] : ["--input-type=module", "-e", PROBE];
      const child = spawnSync(command, args, { cwd: REPO, encoding: "utf8" });
      expect(child.stderr).toBe("");
      expect(child.status).toBe(0);
      const report = JSON.parse(child.stdout) as Record<string, unknown>;
      expect(report.manifest).toBe("function");
      expect(report.before).toBe(0);
      expect(report.verifyType).toBe("function");
      expect(report.listsVerify).toBe(true);
      expect(report.after as number).toBeGreaterThan(0);
      expect(report.runScriptBefore).toBe(0);
      expect(report.runScriptType).toBe("function");
      expect(report.ran).toEqual({ code: 0, stdout: "ran" });
      expect(report.runScriptAfter as number).toBeGreaterThan(0);
    });
  }
});
