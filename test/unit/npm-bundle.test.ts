/**
 * The built npm client loads pacote and arborist from one bundled file (scripts/bundle-npm.mjs):
 * no module of those packages is read from node_modules, the bundle requires nothing but Node
 * built-ins and its declared externals, each library is evaluated on first use, and the
 * externals are the very files pacote and arborist would load — under every runtime the CLI
 * runs on.
 */
import { spawnSync } from "node:child_process";
import { readFile } from "node:fs/promises";
import { builtinModules, createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { buildDist, REPO } from "../helpers/build-dist.js";
import { requireRuntime, runtimeIt, runtimes, skipNote } from "../helpers/runtimes.js";

const BUNDLE = path.join(REPO, "dist", "vendor", "npm.cjs");
const CLIENT = pathToFileURL(path.join(REPO, "dist", "plugins", "npm-client.js")).href;
const EXTERNALS = ["semver", "npm-package-arg", "sigstore", "@npmcli/run-script"];

// Runs in the child: which files of pacote and arborist the CommonJS cache holds after each step.
const PROBE = `
import { createRequire } from "node:module";
const req = createRequire(${JSON.stringify(BUNDLE)});
const fromPackage = (name) => Object.keys(req.cache).filter((f) => f.includes("/node_modules/" + name + "/")).length;
const bundleLoaded = () => Object.keys(req.cache).includes(${JSON.stringify(BUNDLE)});
const { loadPacote, loadArborist } = await import(${JSON.stringify(CLIENT)});
const beforeAny = bundleLoaded();
const pacote = await loadPacote();
const Arborist = await loadArborist();
console.log(JSON.stringify({
  beforeAny,
  afterLoad: bundleLoaded(),
  manifest: typeof pacote.manifest,
  arborist: typeof Arborist.prototype.reify,
  pacoteFiles: fromPackage("pacote"),
  arboristFiles: fromPackage("@npmcli/arborist"),
}));
`;

beforeAll(async () => {
  await buildDist();
}, 180_000);

describe("npm's libraries come from one bundled file", () => {
  it("requires only Node built-ins and its declared externals, which resolve to what pacote and arborist would load", async () => {
    const text = await readFile(BUNDLE, "utf8");
    const builtins = new Set(builtinModules);
    const required = [...new Set([...text.matchAll(/\brequire\(\s*[`"']([^`"']+)[`"']\s*\)/g)].map((m) => m[1]!))];
    const packages = required.filter((s) => !s.startsWith("node:") && !builtins.has(s)).map((s) => (s.startsWith("@") ? s.split("/").slice(0, 2) : s.split("/").slice(0, 1)).join("/"));
    expect([...new Set(packages)].sort()).toEqual([...EXTERNALS, "supports-color"].sort());
    const fromBundle = createRequire(BUNDLE);
    const fromRepo = createRequire(path.join(REPO, "package.json"));
    for (const name of EXTERNALS) {
      const users = name === "sigstore" ? ["pacote"] : ["pacote", "@npmcli/arborist"];
      for (const user of users) expect(createRequire(fromRepo.resolve(user)).resolve(name)).toBe(fromBundle.resolve(name));
    }
  });

  for (const runtime of runtimes()) {
    runtimeIt(runtime)(`is what the client loads, on first use (${runtime.label}${skipNote(runtime)})`, { timeout: 60_000 }, () => {
      const command = requireRuntime(runtime);
      const args = runtime.id === "bun" ? ["-e", PROBE] : ["--input-type=module", "-e", PROBE];
      const child = spawnSync(command, args, { cwd: REPO, encoding: "utf8" });
      expect(child.stderr).toBe("");
      expect(child.status).toBe(0);
      expect(JSON.parse(child.stdout)).toEqual({ beforeAny: false, afterLoad: true, manifest: "function", arborist: "function", pacoteFiles: 0, arboristFiles: 0 });
    });
  }
});
