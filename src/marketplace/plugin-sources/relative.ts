/**
 * Relative sources (`"./plugins/x"` from the marketplace root, a bare `"x"` under
 * `metadata.pluginRoot`; `relativeSourceDir`): a folder inside the marketplace repository. It
 * must stay inside the repository once symlinks are resolved, and a catalog fetched by URL has no
 * repository to resolve in. Of a git marketplace, the plugin's commit is the marketplace's (what
 * Claude Code records as `gitCommitSha` for in-repo plugins); of a local folder marketplace, the
 * commit checked out there when the folder is a git work tree (Claude Code records it too).
 */
import { realpath, stat } from "node:fs/promises";
import path from "node:path";
import { isPathInside } from "../../core/contain.js";
import { XcshToolsError } from "../../core/errors.js";
import { headCommit } from "../../core/git.js";
import { relativeSourceDir } from "../../manifest/marketplace-catalog.js";
import type { PluginSourceKind } from "./types.js";

export const relativeSource: PluginSourceKind = {
  kind: "relative",
  async fetch({ entry, catalog, marketplace, root, folderCommit }, _scratch, world) {
    const source = entry.source as string;
    if (!root) {
      throw new XcshToolsError("EURL_RELATIVE_SOURCE", `Plugin "${entry.name}" uses the relative source "${source}", but marketplace "${marketplace.name}" was added from a catalog URL, which has no repository to resolve it in`, {
        hint: "Add the marketplace from its git repository instead of the raw marketplace.json URL (or ask its owner to use github/url/npm sources).",
      });
    }
    const rootReal = await realpath(root);
    const dir = path.resolve(root, relativeSourceDir(source, catalog));
    const real = await realpath(dir).catch(() => undefined);
    if (!real || !(await stat(real)).isDirectory()) {
      throw new XcshToolsError("ESOURCE_NOT_FOUND", `Plugin "${entry.name}": its source folder ${dir} does not exist in marketplace "${marketplace.name}"`, {
        file: dir,
        hint: `Run \`xcsh-tools marketplace update ${marketplace.name}\`; if it persists, the catalog points at a missing folder.`,
      });
    }
    if (!isPathInside(real, rootReal)) {
      throw new XcshToolsError("EENTRY_ESCAPE", `Plugin "${entry.name}": its source "${source}" resolves to ${real}, outside the marketplace ${rootReal}`, {
        hint: "A relative source must stay inside the marketplace repository.",
      });
    }
    const commit =
      marketplace.sourceType === "git" || marketplace.sourceType === "github"
        ? marketplace.commitSha
        : marketplace.sourceType === "local" && folderCommit !== false
          ? await headCommit(rootReal, { env: world.env, timeoutMs: world.gitTimeoutMs, ...(world.signal ? { signal: world.signal } : {}) })
          : undefined;
    return { dir: real, within: rootReal, ...(commit ? { gitCommitSha: commit } : {}) };
  },
};
