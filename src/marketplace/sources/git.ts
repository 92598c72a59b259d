/**
 * Git marketplaces: `https://…` (not ending in `.json`), `ssh://…`, `git@host:path`, `git://…`,
 * `file://…`, optionally `#ref`. Cloned with the system git (../git.ts); the clone's content,
 * without `.git`, becomes the marketplace cache so relative plugin sources resolve in it.
 */
import path from "node:path";
import { cloneAt } from "../../core/git.js";
import { redactSecrets } from "../../core/redact.js";
import { assertSourceArg, gitRefProblem, gitUrlProblem, isLocalGitUrl } from "../../core/source-args.js";
import { readCatalogIn } from "../catalog.js";
import { splitRef, type CatalogSource, type CatalogSourceSpec, type FetchedCatalog, type SourceWorld } from "./types.js";

const GIT_URL = /^(https?:\/\/|ssh:\/\/|git:\/\/|file:\/\/|[\w.-]+@[\w.-]+:)/i;

/**
 * Clone `url#ref` into `<scratch>/clone` and read its catalog. The URL is one the user typed (or
 * a registry entry recording one), so a local repository is allowed; its catalog counts as from
 * the local disk exactly when the URL is local.
 */
export async function fetchGitCatalog(uri: string, scratch: string, world: SourceWorld): Promise<FetchedCatalog> {
  const { url, ref } = splitRef(uri);
  const where = `Marketplace source ${redactSecrets(uri)}`;
  assertSourceArg(gitUrlProblem(url, { allowLocal: true }), where);
  if (ref !== undefined) assertSourceArg(gitRefProblem(ref), where);
  const dir = path.join(scratch, "clone");
  const allowLocal = isLocalGitUrl(url);
  // A 40-hex ref is a commit (a team lock pins catalogs so): git fetches it by id, `--branch` would not find it.
  const pin = ref === undefined ? {} : /^[0-9a-f]{40}$/.test(ref) ? { sha: ref } : { ref };
  const commitSha = await cloneAt(url, dir, pin, { env: world.env, timeoutMs: world.gitTimeoutMs, allowLocal, ...(world.signal ? { signal: world.signal } : {}) });
  const loaded = await readCatalogIn(dir, `The repository ${redactSecrets(uri)}`, { allowLocal });
  return { loaded, contentDir: dir, commitSha };
}

export const gitSource: CatalogSource = {
  kind: "git",
  parse(input) {
    // Option-shaped and `<transport>::` inputs are no kind at all here: parseCatalogSource refuses them first.
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
