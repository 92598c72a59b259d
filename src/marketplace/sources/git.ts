/**
 * Git marketplaces: `https://…` (not ending in `.json`), `ssh://…`, `git@host:path`, `git://…`,
 * `file://…`, optionally `#ref`. Cloned with the system git (../git.ts); the clone's content,
 * without `.git`, becomes the marketplace cache so relative plugin sources resolve in it.
 */
import path from "node:path";
import { cloneAt } from "../git.js";
import { readCatalogIn } from "../catalog.js";
import { redactUrl } from "../git.js";
import { splitRef, type CatalogSource, type CatalogSourceSpec, type FetchedCatalog, type SourceWorld } from "./types.js";

const GIT_URL = /^(https?:\/\/|ssh:\/\/|git:\/\/|file:\/\/|[\w.-]+@[\w.-]+:)/i;

/** Clone `url#ref` into `<scratch>/clone` and read its catalog. */
export async function fetchGitCatalog(uri: string, scratch: string, world: SourceWorld): Promise<FetchedCatalog> {
  const { url, ref } = splitRef(uri);
  const dir = path.join(scratch, "clone");
  const commitSha = await cloneAt(url, dir, ref ? { ref } : {}, { env: world.env, timeoutMs: world.gitTimeoutMs, ...(world.signal ? { signal: world.signal } : {}) });
  const loaded = await readCatalogIn(dir, `The repository ${redactUrl(uri)}`);
  return { loaded, contentDir: dir, commitSha };
}

export const gitSource: CatalogSource = {
  kind: "git",
  parse(input) {
    if (!GIT_URL.test(input)) return undefined;
    if (/^https?:\/\//i.test(input)) {
      try {
        if (new URL(splitRef(input).url).pathname.toLowerCase().endsWith(".json")) return undefined;
      } catch {
        // a malformed https URL is still meant as git: git reports it
      }
    }
    return { kind: "git", uri: input };
  },
  fetch(spec: CatalogSourceSpec, scratch, world) {
    return fetchGitCatalog(spec.uri, scratch, world);
  },
};
