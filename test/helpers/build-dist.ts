/**
 * Build `dist/` once for tests that spawn built code (validate's module checker, the CLI): the
 * package's own build (scripts/build.mjs: the declarations and the bundle), which skips itself
 * when dist/ was built from the very inputs the tree holds now. Test files run in parallel forks,
 * so the build takes a lock folder: two concurrent builds writing one dist/ would race.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const LOCK = path.join(os.tmpdir(), `xcsh-tools-build-${Buffer.from(REPO).toString("hex").slice(-24)}.lock`);

/** Make sure dist/ holds a build of the current sources. */
export async function buildDist(): Promise<void> {
  // Built once for the whole run by the global setup (test/helpers/global-dist.ts).
  if (process.env.XCSH_TOOLS_TEST_DIST_BUILT === "1") return;
  for (let waited = 0; ; waited += 200) {
    try {
      mkdirSync(LOCK);
      writeFileSync(path.join(LOCK, "pid"), String(process.pid));
      break;
    } catch {
      // A run killed while building leaves its lock behind: a lock whose holder is gone is taken over.
      if (!lockHolderAlive()) rmSync(LOCK, { recursive: true, force: true });
      else if (waited > 180_000) throw new Error(`build lock ${LOCK} held for 3 minutes`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  try {
    try {
      execFileSync(process.execPath, [path.join(REPO, "scripts", "build.mjs")], { cwd: REPO, stdio: "pipe" });
    } catch (error) {
      // A type error elsewhere in the tree (others work concurrently) fails tsc's declarations,
      // not the bundle: the tests then fail on behaviour. A bundle that did not build is fatal.
      if (!existsSync(path.join(REPO, "dist", "cli", "main.js"))) throw error;
    }
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
}

/** Whether the process that took the build lock still runs (a lock without its pid yet is young: alive). */
function lockHolderAlive(): boolean {
  let pid: number;
  try {
    pid = Number(readFileSync(path.join(LOCK, "pid"), "utf8"));
  } catch {
    try {
      return Date.now() - statSync(LOCK).mtimeMs < 10_000;
    } catch {
      return false;
    }
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The folder `bundleForTest(name, …)` writes: `<it>/dist/…` beside a copy of package.json, as in the package. */
export function testBundleRoot(name: string): string {
  return path.join(REPO, "node_modules", ".cache", "xcsh-tools-test-bundles", name);
}

/**
 * Bundle some of our modules (name → source file, `.ts` of src/ or a test's own entry) the way
 * the package's build does (scripts/lib/bundle.mjs), into `<testBundleRoot(name)>/dist/<name>.js`,
 * for tests that drive one module of the built package in a process of its own. `plugins` run
 * before the build's (a test's instrumentation).
 */
export async function bundleForTest(name: string, input: Record<string, string>, plugins: unknown[] = []): Promise<string> {
  const root = testBundleRoot(name);
  rmSync(root, { recursive: true, force: true });
  mkdirSync(root, { recursive: true });
  writeFileSync(path.join(root, "package.json"), readFileSync(path.join(REPO, "package.json")));
  const { bundle } = (await import(pathToFileURL(path.join(REPO, "scripts", "lib", "bundle.mjs")).href)) as { bundle(options: { input: Record<string, string>; dir: string; plugins: unknown[] }): Promise<unknown> };
  await bundle({ input, dir: path.join(root, "dist"), plugins });
  return root;
}

/**
 * The modules a list of loaded file URLs stands for: a file of the built dist/ stands for every
 * module the bundle put in it (dist/modules.json, written by the build: `/src/…` for ours,
 * `/node_modules/…` for a package's), any other URL for its own path.
 */
export function modulesOfLoadedFiles(urls: readonly string[]): string[] {
  const dist = path.join(REPO, "dist");
  const held = JSON.parse(readFileSync(path.join(dist, "modules.json"), "utf8")) as Record<string, string[]>;
  return urls.flatMap((url) => {
    const file = url.startsWith("file:") ? fileURLToPath(url) : url;
    const inDist = path.relative(dist, file).split(path.sep).join("/");
    return file.startsWith(dist + path.sep) && held[inDist] ? held[inDist].map((id) => `/${id}`) : [file];
  });
}

/** Every `.js` file of the built dist/ but the vendored ones (copied, not bundled by us). */
export function distJsFiles(dir = path.join(REPO, "dist"), out: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== "vendor") distJsFiles(full, out);
    } else if (entry.name.endsWith(".js")) out.push(full);
  }
  return out;
}
