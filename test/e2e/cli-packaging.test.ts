/**
 * The packaging model: the build is tsc's output alone, and third-party code loads from
 * node_modules, so what `npm ls` and `npm audit` report is what runs. An install and a list are
 * run with a hook logging, per process, every module resolved for `import` and every file in the
 * CommonJS cache at exit; npm's libraries, semver and TypeBox must come from the very package
 * folders `npm ls` names, and no file of dist/ may hold a copy of them.
 */
import { execFileSync } from "node:child_process";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { buildDist, REPO } from "../helpers/build-dist.js";
import { hermeticEnv, runProcess, type ProcessResult } from "../helpers/run-cli.js";
import { makeTmpWorld, type TmpWorld } from "../helpers/tmp-home.js";

const EXAMPLE_PLUGIN = path.join(REPO, "examples", "plugin-greet");
/** The packages whose loading this checks: npm's libraries, npm's spec grammar, TypeBox. */
const CHECKED = ["pacote", "@npmcli/arborist", "semver", "npm-package-arg", "@sinclair/typebox"];

let w: TmpWorld;
beforeAll(buildDist, 180_000);
beforeEach(async () => {
  w = await makeTmpWorld();
});
afterEach(async () => w?.cleanup());

/** Run the CLI with every loaded file logged per process; returns the result and each process's files (absolute paths). */
async function runLogged(args: string[]): Promise<{ r: ProcessResult; perProcess: string[][] }> {
  const logs = path.join(w.root, "logs");
  await mkdir(logs, { recursive: true });
  const hooks = path.join(w.root, "log-hooks.mjs");
  await writeFile(hooks, `import { appendFileSync } from "node:fs";\nexport async function resolve(specifier, context, next) {\n  const result = await next(specifier, context);\n  appendFileSync(${JSON.stringify(logs)} + "/" + process.pid, result.url + "\\n");\n  return result;\n}\n`);
  const register = path.join(w.root, "register.mjs");
  await writeFile(
    register,
    `import { register, createRequire } from "node:module";\nimport { appendFileSync } from "node:fs";\nimport { pathToFileURL } from "node:url";\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n` +
      `const cache = createRequire(import.meta.url).cache;\nprocess.on("exit", () => appendFileSync(${JSON.stringify(logs)} + "/" + process.pid, Object.keys(cache).map((f) => pathToFileURL(f).href).join("\\n") + "\\n"));\n`,
  );
  const r = await runProcess(process.execPath, [path.join(REPO, "bin", "xcsh-tools.js"), ...args], { cwd: w.cwd, env: hermeticEnv(w.home, { NODE_OPTIONS: `--import=${pathToFileURL(register).href}` }), timeoutMs: 60_000 });
  const perProcess = await Promise.all(
    (await readdir(logs)).map(async (pid) =>
      [...new Set((await readFile(path.join(logs, pid), "utf8")).split("\n").filter((url) => url.startsWith("file:")))].map((url) => fileURLToPath(url)),
    ),
  );
  await Promise.all((await readdir(logs)).map((pid) => writeFile(path.join(logs, pid), "")));
  return { r, perProcess };
}

/** The folder of each checked package as `npm ls` reports the tree (a package may appear at several depths: all of them). */
function npmLsFolders(): Map<string, Set<string>> {
  const tree = JSON.parse(execFileSync("npm", ["ls", "--all", "--long", "--json", ...CHECKED], { cwd: REPO, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 })) as NpmLsNode;
  const folders = new Map<string, Set<string>>(CHECKED.map((name) => [name, new Set<string>()]));
  const walk = (node: NpmLsNode) => {
    for (const [name, child] of Object.entries(node.dependencies ?? {})) {
      if (folders.has(name) && child.path) folders.get(name)!.add(child.path);
      walk(child);
    }
  };
  walk(tree);
  return folders;
}
interface NpmLsNode {
  path?: string;
  dependencies?: Record<string, NpmLsNode>;
}

/** The folder of the checked package a file belongs to (the deepest `node_modules/<name>` in its path), if any. */
function packageFolderOf(file: string): { name: string; folder: string } | undefined {
  for (const name of CHECKED) {
    const marker = `${path.sep}node_modules${path.sep}${name.split("/").join(path.sep)}${path.sep}`;
    const at = file.lastIndexOf(marker);
    if (at >= 0) return { name, folder: file.slice(0, at + marker.length - 1) };
  }
  return undefined;
}

describe("the packaging model: third-party code loads from node_modules", () => {
  it("dist/ is tsc's output: no bundle, no vendored copy of a dependency", async () => {
    const files = (await readdir(path.join(REPO, "dist"), { recursive: true })).map(String);
    expect(files.filter((file) => /\.bundle\.js$|^vendor[\\/]|\.cjs$/.test(file))).toEqual([]);
    for (const file of files.filter((f) => f.endsWith(".js"))) {
      const text = await readFile(path.join(REPO, "dist", file), "utf8");
      expect(text.startsWith("// Bundled by"), file).toBe(false);
    }
  });

  it("an install and a list load npm's libraries, semver and TypeBox from the package folders npm ls reports", { timeout: 120_000 }, async () => {
    const folders = npmLsFolders();
    const seen = new Map<string, Set<string>>();
    for (const args of [["install", EXAMPLE_PLUGIN], ["list", "--json"]]) {
      const { r, perProcess } = await runLogged(args);
      expect(r.code, r.stderr).toBe(0);
      for (const file of perProcess.flat()) {
        // Nothing of ours but tsc's output beside the entry.
        if (file.startsWith(path.join(REPO, "dist") + path.sep)) expect(file.endsWith(".js"), file).toBe(true);
        const owner = packageFolderOf(file);
        if (!owner) continue;
        if (!seen.has(owner.name)) seen.set(owner.name, new Set());
        seen.get(owner.name)!.add(owner.folder);
      }
    }
    // The install used all of them (TypeBox for our manifests and in the validation child).
    expect([...seen.keys()].sort()).toEqual([...CHECKED].sort());
    for (const [name, loaded] of seen) {
      for (const folder of loaded) expect(folders.get(name), `${name} loaded from ${folder}`).toContain(folder);
    }
  });
});
