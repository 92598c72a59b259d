/**
 * A temporary world per test: a HOME, an xcsh root inside it, and a project folder (cwd).
 * Nothing a test does reaches the real HOME.
 *
 * The world starts as a new user's does: nothing trusted. A test whose project must be trusted says
 * so where it makes the world (`{ trustProject: true }` writes the user's trust record in
 * `<home>/.xcsh`, as `xcsh-tools trust` would), so no test passes on a grant a reader of it cannot
 * see (the README's walkthroughs once did: their project-scope commands passed only because this
 * helper trusted every project).
 */
import { mkdtemp, mkdir, rm, writeFile, realpath } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach } from "vitest";

export interface TmpWorld {
  /** The fake user home. */
  home: string;
  /** `<home>/.xcsh`. */
  xcshHome: string;
  /** A project folder, outside home. */
  cwd: string;
  /** The parent folder of all of it. */
  root: string;
  /** Write a file (creating folders) relative to `root`, or at an absolute path. */
  write(file: string, content: string | object): Promise<string>;
  cleanup(): Promise<void>;
}

export interface WorldOptions {
  /** Write a trust record naming the project (default: untrusted, as on a new user's machine). */
  trustProject?: boolean;
}

export async function makeTmpWorld(prefix = "xcsh-tools-test-", options: WorldOptions = {}): Promise<TmpWorld> {
  const root = await realpath(await mkdtemp(path.join(os.tmpdir(), prefix)));
  const home = path.join(root, "home");
  const xcshHome = path.join(home, ".xcsh");
  const cwd = path.join(root, "project");
  await mkdir(home, { recursive: true });
  await mkdir(cwd, { recursive: true });
  if (options.trustProject === true) await writeTrustRecord(xcshHome, [cwd]);
  return {
    root,
    home,
    xcshHome,
    cwd,
    async write(file, content) {
      const target = path.isAbsolute(file) ? file : path.join(root, file);
      await mkdir(path.dirname(target), { recursive: true });
      await writeFile(target, typeof content === "string" ? content : `${JSON.stringify(content, null, 2)}\n`);
      return target;
    },
    async cleanup() {
      await rm(root, { recursive: true, force: true });
    },
  };
}

/**
 * A fresh world for every test of the file, removed after it: `assign` receives each one (the
 * file keeps its own `let w: TmpWorld`, so its tests read `w` as before).
 */
export function worldPerTest(assign: (world: TmpWorld) => void, prefix?: string, options?: WorldOptions): void {
  let current: TmpWorld | undefined;
  beforeEach(async () => {
    current = await makeTmpWorld(prefix, options);
    assign(current);
  });
  afterEach(async () => {
    await current?.cleanup();
    current = undefined;
  });
}

/** Write the user's trust record under `xcshHome` naming `projects` (as `xcsh-tools trust` does). */
export async function writeTrustRecord(xcshHome: string, projects: string[]): Promise<void> {
  const file = path.join(xcshHome, "plugins", ".xcsh-tools", "trusted-projects.json");
  await mkdir(path.dirname(file), { recursive: true });
  const record = { version: 1, projects: projects.map((p) => ({ path: p, trustedAt: "2026-01-01T00:00:00.000Z" })) };
  await writeFile(file, `${JSON.stringify(record, null, 2)}\n`);
}

/**
 * Point npm, and our CLI through it, at one registry only: `<home>/.npmrc` with an explicit
 * `registry=` (nothing can fall back to registry.npmjs.org), then `extra` lines (auth, scopes).
 * Every world that installs from the test registry, or from a dead port on purpose, starts so.
 */
export async function writeUserNpmrc(home: string, registry: string, extra = ""): Promise<string> {
  const file = path.join(home, ".npmrc");
  await mkdir(home, { recursive: true });
  await writeFile(file, `registry=${registry}\n${extra}`);
  return file;
}
