/**
 * Git marketplaces: `https://…` (not ending in `.json`), `ssh://…`, `git@host:path`, `git://…`,
 * `file://…`, optionally `#ref`. Cloned with the system git (../git.ts); the clone's content,
 * without `.git`, becomes the marketplace cache so relative plugin sources resolve in it.
 */
import path from "node:path";
import { cloneAt } from "../../core/git.js";
import { redactSecrets } from "../../core/redact.js";
import { isRealPathInside } from "../../core/contain.js";
import { XcshToolsError } from "../../core/errors.js";
import { statOrUndefined } from "../../core/paths.js";
import { assertSourceArg, gitRefProblem, gitUrlProblem, isLocalGitUrl, subdirPathProblem } from "../../core/source-args.js";
import { readCatalogIn } from "../catalog.js";
import { splitRef, type CatalogSource, type CatalogSourceSpec, type FetchedCatalog, type SourceWorld } from "./types.js";

const GIT_URL = /^(https?:\/\/|ssh:\/\/|git:\/\/|file:\/\/|[\w.-]+@[\w.-]+:)/i;

/**
 * Clone `url#ref` into `<scratch>/clone` and read its catalog. The URL is one the user typed (or
 * a registry entry recording one), so a local repository is allowed; its catalog counts as from
 * the local disk exactly when the URL is local.
 */
export async function fetchGitCatalog(uri: string, scratch: string, world: SourceWorld, folder?: string): Promise<FetchedCatalog> {
  const { url, ref } = splitRef(uri);
  const where = `Marketplace source ${redactSecrets(uri)}`;
  assertSourceArg(gitUrlProblem(url, { allowLocal: true }), where);
  if (ref !== undefined) assertSourceArg(gitRefProblem(ref), where);
  const dir = path.join(scratch, "clone");
  const allowLocal = isLocalGitUrl(url);
  // A 40-hex ref is a commit (a team lock pins catalogs so): git fetches it by id, `--branch` would not find it.
  const pin = ref === undefined ? {} : /^[0-9a-f]{40}$/.test(ref) ? { sha: ref } : { ref };
  const commitSha = await cloneAt(url, dir, pin, { env: world.env, timeoutMs: world.gitTimeoutMs, allowLocal, ...(world.signal ? { signal: world.signal } : {}) });
  const content = folder === undefined ? dir : folderOfClone(dir, folder, uri);
  const loaded = await readCatalogIn(content, `The repository ${redactSecrets(uri)}${folder === undefined ? "" : ` (folder ${folder})`}`, { allowLocal });
  return { loaded, contentDir: content, commitSha };
}

/**
 * The marketplace folder `folder` of a clone, which must be a folder of the clone once links are
 * resolved: a repository may not lead the catalog read (or the cache built from it) out of itself.
 */
function folderOfClone(clone: string, folder: string, uri: string): string {
  const where = `Marketplace source ${redactSecrets(uri)}`;
  assertSourceArg(subdirPathProblem(folder), where);
  const content = path.join(clone, folder);
  if (!isRealPathInside(content, clone) || !statOrUndefined(content)?.isDirectory()) {
    throw new XcshToolsError("ECATALOG_NOT_FOUND", `${where}: ${JSON.stringify(folder)} is not a folder of the repository (a link out of it counts as none)`, {
      hint: "Point `path` at the folder that holds .xcsh-plugin/marketplace.json or .claude-plugin/marketplace.json, or at that file.",
    });
  }
  return content;
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
    return fetchGitCatalog(spec.uri, scratch, world, spec.folder);
  },
};
