/**
 * A loopback git server over smart HTTP for tests; the server itself is scripts/lib/git-http.mjs,
 * shared with the conformance recorder (which runs without a TypeScript toolchain).
 */
import path from "node:path";
import { pathToFileURL } from "node:url";
import { REPO_ROOT } from "./runtimes.js";

export interface GitHttpServer {
  /** `http://127.0.0.1:<port>`; a bare repo `<root>/x.git` is `<url>/x.git`. */
  url: string;
  close(): Promise<void>;
}

export async function startGitHttpServer(root: string): Promise<GitHttpServer> {
  const mod = (await import(pathToFileURL(path.join(REPO_ROOT, "scripts", "lib", "git-http.mjs")).href)) as { startGitHttpServer(root: string): Promise<GitHttpServer> };
  return mod.startGitHttpServer(root);
}
