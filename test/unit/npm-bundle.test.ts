/**
 * The built npm client loads pacote and arborist from one bundled file (scripts/bundle-npm.mjs):
 * no module of those packages is read from node_modules, the bundle requires nothing but Node
 * built-ins and its declared externals, each library is evaluated on first use, and the
 * externals are the very files pacote and arborist would load; semver and npm-package-arg, two
 * of them, come from one small bundle our code uses too, and no file of theirs is read — under
 * every runtime the CLI runs on.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import os from "node:os";
import { builtinModules, createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { buildDist, REPO } from "../helpers/build-dist.js";
import { requireRuntime, runtimeIt, runtimes, skipNote } from "../helpers/runtimes.js";

const BUNDLE = path.join(REPO, "dist", "vendor", "npm.cjs");
const CLIENT = pathToFileURL(path.join(REPO, "dist", "plugins", "npm-client.js")).href;
const CODE_CACHE = pathToFileURL(path.join(REPO, "dist", "core", "code-cache.js")).href;
const NPM_SPEC = pathToFileURL(path.join(REPO, "dist", "core", "npm-spec.js")).href;
const SPEC_BUNDLE = path.join(REPO, "dist", "vendor", "npm-spec.cjs");
/** What the npm bundle requires of semver and npm-package-arg (scripts/bundle-npm.mjs gives the spec bundle each). */
const SPEC_IDS = ["npm-package-arg", "semver", "semver/functions/clean", "semver/functions/satisfies", "semver/functions/valid", "semver/ranges/valid"];
const EXTERNALS = ["semver", "npm-package-arg", "sigstore", "@npmcli/run-script"];

// Runs in the child: which files of pacote and arborist the CommonJS cache holds after each step.
const PROBE = `
import nodeModule, { createRequire } from "node:module";
if (process.env.PROBE_COMPILE_CACHE) nodeModule.enableCompileCache();
const req = createRequire(${JSON.stringify(BUNDLE)});
const fromPackage = (name) => Object.keys(req.cache).filter((f) => f.includes("/node_modules/" + name + "/")).length;
const { loadPacote, loadArborist } = await import(${JSON.stringify(CLIENT)});
const { requireWithCodeCache } = await import(${JSON.stringify(CODE_CACHE)});
const { npmSpecModules, semver, npa } = await import(${JSON.stringify(NPM_SPEC)});
const pacote = await loadPacote();
const Arborist = await loadArborist();
// Memoized: the state of the load the client made.
const loaded = requireWithCodeCache(${JSON.stringify(BUNDLE)});
const specIds = ${JSON.stringify(SPEC_IDS)};
const ours = new Set(Object.values(npmSpecModules));
console.log(JSON.stringify({
  codeCache: loaded.state,
  sameExports: loaded.exports.pacote === pacote && loaded.exports.Arborist === Arborist,
  manifest: typeof pacote.manifest,
  arborist: typeof Arborist.prototype.reify,
  pacoteFiles: fromPackage("pacote"),
  arboristFiles: fromPackage("@npmcli/arborist"),
  // What the bundle requires of semver and npm-package-arg is ours, and no file of theirs was read.
  sameSpecModules: specIds.every((id) => req(id) === npmSpecModules[id]) && npmSpecModules.semver === semver && npmSpecModules["npm-package-arg"] === npa,
  specFiles: ["semver", "npm-package-arg", "hosted-git-info"].flatMap((name) => Object.keys(req.cache).filter((f) => f.includes("/node_modules/" + name + "/") && !ours.has(req.cache[f].exports))).length,
}));
`;

beforeAll(async () => {
  await buildDist();
}, 180_000);

describe("npm's libraries come from one bundled file", () => {
  it("requires only Node built-ins and its declared externals, which resolve to what pacote and arborist would load", async () => {
    const text = await readFile(BUNDLE, "utf8");
    // ASCII only (charset "ascii"): the code cache loader then skips UTF-8 decoding.
    expect(text.match(/[^\x00-\x7f]/)).toBeNull();
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

  it("semver and npm-package-arg come from one file of their own, holding every specifier the npm bundle requires of them", async () => {
    const npmText = await readFile(BUNDLE, "utf8");
    const required = new Set([...npmText.matchAll(/\brequire\(\s*[`"']([^`"']+)[`"']\s*\)/g)].map((m) => m[1]!));
    expect([...required].filter((s) => /^(semver|npm-package-arg)(\/|$)/.test(s)).sort()).toEqual(SPEC_IDS);
    const specText = await readFile(SPEC_BUNDLE, "utf8");
    const builtins = new Set(builtinModules);
    expect([...specText.matchAll(/\brequire\(\s*[`"']([^`"']+)[`"']\s*\)/g)].map((m) => m[1]!).filter((s) => !s.startsWith("node:") && !builtins.has(s))).toEqual([]);
    const spec = createRequire(SPEC_BUNDLE)(SPEC_BUNDLE) as Record<string, unknown>;
    expect(Object.keys(spec).sort()).toEqual(SPEC_IDS);
    const semver = spec.semver as typeof import("semver");
    // Subpaths are the very functions of the package's index, as in the package.
    expect(spec["semver/functions/clean"]).toBe(semver.clean);
    expect(spec["semver/ranges/valid"]).toBe(semver.validRange);
    expect((spec["npm-package-arg"] as typeof import("npm-package-arg"))("a@^1.2").type).toBe("range");
  });

  it("the code cache loader reads ASCII and UTF-8 sources alike", { timeout: 60_000 }, () => {
    const tmp = mkdtempSync(path.join(os.tmpdir(), "xcsh-tools-code-cache-test-"));
    try {
      writeFileSync(path.join(tmp, "ascii.cjs"), `module.exports = "plain \\u00e9";\n`);
      writeFileSync(path.join(tmp, "utf8.cjs"), `module.exports = "Bücher \u2665 \u{1F4A9}";\n`);
      const probe = `
        const { requireWithCodeCache } = await import(${JSON.stringify(CODE_CACHE)});
        const load = (name) => requireWithCodeCache(${JSON.stringify(tmp)} + "/" + name);
        console.log(JSON.stringify([load("ascii.cjs"), load("utf8.cjs")]));`;
      const run = () => {
        const child = spawnSync(process.execPath, ["--input-type=module", "-e", probe], { encoding: "utf8", env: { ...process.env, TMPDIR: tmp, NODE_DISABLE_COMPILE_CACHE: undefined } });
        expect(child.stderr).toBe("");
        return JSON.parse(child.stdout) as { exports: unknown; state: string }[];
      };
      const texts = [{ exports: "plain \u00e9" }, { exports: "Bücher \u2665 \u{1F4A9}" }];
      expect(run()).toEqual(texts.map((t) => ({ ...t, state: "miss" })));
      expect(run()).toEqual(texts.map((t) => ({ ...t, state: "hit" })));
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });

  for (const runtime of runtimes()) {
    runtimeIt(runtime)(`is what the client loads, with our code cache on Node (${runtime.label}${skipNote(runtime)})`, { timeout: 60_000 }, () => {
      const command = requireRuntime(runtime);
      const tmp = mkdtempSync(path.join(os.tmpdir(), "xcsh-tools-code-cache-test-"));
      try {
        const probe = (env: NodeJS.ProcessEnv = {}) => {
          const args = runtime.id === "bun" ? ["-e", PROBE] : ["--input-type=module", "-e", PROBE];
          const child = spawnSync(command, args, { cwd: REPO, encoding: "utf8", env: { ...process.env, TMPDIR: tmp, NODE_DISABLE_COMPILE_CACHE: undefined, ...env } });
          expect(child.stderr).toBe("");
          expect(child.status).toBe(0);
          return JSON.parse(child.stdout) as Record<string, unknown>;
        };
        const libraries = { sameExports: true, manifest: "function", arborist: "function", pacoteFiles: 0, arboristFiles: 0, sameSpecModules: true, specFiles: 0 };
        // Bun keeps compiled code itself; NODE_DISABLE_COMPILE_CACHE turns ours off as it does Node's.
        expect(probe({ NODE_DISABLE_COMPILE_CACHE: "1" })).toEqual({ ...libraries, codeCache: "off" });
        const cached = runtime.id !== "bun";
        expect(probe()).toEqual({ ...libraries, codeCache: cached ? "miss" : "off" });
        const folder = readdirSync(tmp).find((name) => name.startsWith("xcsh-tools-code-cache-"));
        if (!cached) {
          expect(folder).toBeUndefined();
          return;
        }
        const dir = path.join(tmp, folder!);
        const [file] = readdirSync(dir);
        expect(file).toMatch(/^npm\.cjs-[0-9a-f]{32}\.v8$/);
        expect(probe()).toEqual({ ...libraries, codeCache: "hit" });
        // Node's own compile cache (22 and later), on as our bin shim turns it, does not replace
        // ours: it keeps only what was compiled before the file ran.
        if (runtime.id === "node22" || runtime.id === "node24") expect(probe({ PROBE_COMPILE_CACHE: "1" })).toEqual({ ...libraries, codeCache: "hit" });
        // A damaged cache is refused by V8 and written anew.
        writeFileSync(path.join(dir, file!), Buffer.alloc(4096, 7));
        expect(probe()).toEqual({ ...libraries, codeCache: "rejected" });
        expect(probe()).toEqual({ ...libraries, codeCache: "hit" });
        // A folder others may write to is never read: a code cache is code.
        chmodSync(dir, 0o777);
        expect(probe()).toEqual({ ...libraries, codeCache: "off" });
      } finally {
        rmSync(tmp, { recursive: true, force: true });
      }
    });
  }
});
