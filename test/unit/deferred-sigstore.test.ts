/**
 * The built npm client defers pacote's eager `require("sigstore")` (src/plugins/npm-client.ts):
 * loading pacote must not load sigstore, and the first use of sigstore's exports must reach the
 * real module, under every runtime the CLI runs on.
 */
import { spawnSync } from "node:child_process";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { beforeAll, describe, expect } from "vitest";
import { buildDist, REPO } from "../helpers/build-dist.js";
import { requireRuntime, runtimeIt, runtimes, skipNote } from "../helpers/runtimes.js";

const CLIENT = pathToFileURL(path.join(REPO, "dist", "plugins", "npm-client.js")).href;

// Runs in the child: loads pacote through our client, then reports what the CommonJS cache holds
// (sigstore's own dependencies) before and after the first touch of sigstore's exports.
const PROBE = `
import { createRequire } from "node:module";
const { loadPacote } = await import(${JSON.stringify(CLIENT)});
const pacote = await loadPacote();
const req = createRequire(createRequire(${JSON.stringify(path.join(REPO, "package.json"))}).resolve("pacote"));
const dependencyFiles = () => Object.keys(req.cache).filter((f) => /[\\\\/]node_modules[\\\\/](@sigstore|@tufjs|tuf-js)[\\\\/]/.test(f)).length;
const before = dependencyFiles();
const sigstore = req("sigstore");
const verifyType = typeof sigstore.verify;
const listsVerify = Object.keys(sigstore).includes("verify");
const after = dependencyFiles();
console.log(JSON.stringify({ manifest: typeof pacote.manifest, before, verifyType, listsVerify, after }));
`;

beforeAll(async () => {
  await buildDist();
}, 180_000);

describe("pacote's sigstore is loaded on first use, not with pacote", () => {
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
    });
  }
});
