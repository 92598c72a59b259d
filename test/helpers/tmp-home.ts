/**
 * A temporary world per test: a HOME, an xcsh root inside it, and a project folder (cwd).
 * Nothing a test does reaches the real HOME.
 */
import { mkdtemp, mkdir, rm, writeFile, realpath } from "node:fs/promises";
import os from "node:os";
import path from "node:path";

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

export async function makeTmpWorld(prefix = "xcsh-tools-test-"): Promise<TmpWorld> {
  const root = await realpath(await mkdtemp(path.join(os.tmpdir(), prefix)));
  const home = path.join(root, "home");
  const xcshHome = path.join(home, ".xcsh");
  const cwd = path.join(root, "project");
  await mkdir(home, { recursive: true });
  await mkdir(cwd, { recursive: true });
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
