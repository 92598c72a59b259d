/**
 * Which folder a local marketplace may be read from.
 *
 * A marketplace added from a folder records that folder as `sourceUri` in `marketplaces.json`,
 * and `install`, `outdated` and `marketplace update` later read its catalog and copy plugin
 * folders from there. `marketplaces.json` is a file like any other (the host, other programs and
 * hand edits write it; a project's comes from whoever published the repository), so the recorded
 * folder is untrusted input with no fixed place to confine it to. What fixes it is the folder's
 * identity, taken when the user typed it: `marketplace add` records, in our own folder
 * (`<ours>/marketplace-folders.json`, never written by the host), the folder's real path, keyed
 * by the registry file and the marketplace name. Before a local source is read, the folder the
 * registry names now must have the same real path (a re-pointed `sourceUri`, or a symlink swapped
 * in on the way, fails); otherwise `EMARKETPLACE_FOLDER_CHANGED` names the registry and the
 * field, and nothing is read. The identity is the real path, not the device and inode: deleting
 * and re-cloning a marketplace folder at the same path is what its owner does, and whoever can
 * replace a folder inside the user's own folders is outside what this check can stop.
 *
 * A project's registry may also name folders inside the project itself (absolute, or relative to
 * the project folder, which keeps a committed registry usable in every clone): those are the
 * project's own files, read only in a trusted project, and need no record. A project registry that
 * names a folder outside the project is used only when this user added it (`--scope project`) on
 * this machine, that is with a record; otherwise `EPATH_OUTSIDE`.
 *
 * Registries written before identities were recorded: the user's own registry has no key in the
 * record file yet, and its local entries are used as they are and adopted (recorded as they are
 * now) at the next `marketplace add`, `update` or `remove`; from then on every local entry of that
 * registry needs a record, so an entry added to the file by hand later is refused. Project
 * registries are never adopted: an old project entry outside the project must be added again.
 */
import { statSync } from "node:fs";
import path from "node:path";
import { isRealPathInside, realPathOrNearest } from "../core/contain.js";
import { XcshToolsError, errorMessage, isXcshToolsError, nodeErrorCode } from "../core/errors.js";
import type { Transaction } from "../core/journal.js";
import { xcshPaths } from "../core/paths.js";
import type { MarketplaceEntry } from "../manifest/marketplaces-registry.js";
import { parseJsonText, readJsonText } from "../manifest/json-file.js";
import { isRecord } from "../manifest/result.js";
import type { MarketplaceContext, Scope } from "./context.js";
import type { FoundMarketplace } from "./state.js";

/** A folder as it was when recorded: its real path. */
export interface FolderIdentity {
  realPath: string;
  recordedAt: string;
}

/** `<ours>/marketplace-folders.json`: registry file (real path) → marketplace name → identity. */
export interface FolderRecords {
  version: 1;
  registries: Record<string, Record<string, FolderIdentity>>;
}

/** The record file. */
export function folderRecordsFile(ctx: Pick<MarketplaceContext, "roots">): string {
  return path.join(xcshPaths(ctx.roots).ours, "marketplace-folders.json");
}

/** The key of a registry file in the record: its real path. */
function registryKey(registryFile: string): string {
  return realPathOrNearest(registryFile);
}

function isIdentity(value: unknown): value is FolderIdentity {
  return isRecord(value) && typeof value.realPath === "string" && path.isAbsolute(value.realPath);
}

/** Read the record file; a missing file is empty, a broken one `EREGISTRY_FILE` (nothing is read from any local folder). */
export function readFolderRecords(ctx: Pick<MarketplaceContext, "roots">): FolderRecords {
  const file = folderRecordsFile(ctx);
  let doc: unknown;
  try {
    const text = readJsonText(file);
    if (text === undefined) return { version: 1, registries: {} };
    doc = parseJsonText(text, file);
  } catch (error) {
    if (isXcshToolsError(error, "ENOT_A_FILE") || isXcshToolsError(error, "EREAD")) throw new XcshToolsError("EREGISTRY_FILE", error.message, { file, hint: error.hint ?? "Check the file.", cause: error });
    // Text that is not JSON (or past the limits of a JSON file we read) is reported below as not a record.
    if (!(error instanceof XcshToolsError)) throw new XcshToolsError("EREGISTRY_FILE", `Cannot read ${file}: ${errorMessage(error)}`, { file, hint: "Check the file's permissions.", cause: error });
  }
  const registries = isRecord(doc) && doc.version === 1 && isRecord(doc.registries) ? doc.registries : undefined;
  if (!registries || !Object.values(registries).every((names) => isRecord(names) && Object.values(names).every(isIdentity))) {
    throw new XcshToolsError("EREGISTRY_FILE", `${file} is not xcsh-tools' record of local marketplace folders ({"version": 1, "registries": {...}})`, {
      file,
      hint: "Nothing was read from a local marketplace folder. Move the file away, then remove and add your local marketplaces again (`xcsh-tools marketplace remove <name>`, `marketplace add <folder>`).",
    });
  }
  return { version: 1, registries: registries as FolderRecords["registries"] };
}

/** The identity of `folder` now; `undefined` when it does not exist. */
export function identityOf(folder: string, now: string): FolderIdentity | undefined {
  try {
    statSync(folder);
  } catch (error) {
    if (nodeErrorCode(error) === "ENOENT" || nodeErrorCode(error) === "ENOTDIR") return undefined;
    throw error;
  }
  return { realPath: realPathOrNearest(folder), recordedAt: now };
}

/** The folder a `sourceUri` names: absolute, or (project scope) relative to the project folder. */
function namedFolder(ctx: Pick<MarketplaceContext, "cwd">, scope: Scope, uri: string): string | undefined {
  if (path.isAbsolute(uri)) return path.resolve(uri);
  return scope === "project" ? path.resolve(ctx.cwd, uri) : undefined;
}

/**
 * The real path of the folder a local marketplace may be read from, checked against its record
 * (see the header). Throws `EMARKETPLACE_FOLDER_CHANGED` or `EPATH_OUTSIDE` naming the registry
 * file and `/marketplaces/<i>/sourceUri`; nothing has been read then.
 */
export function checkedLocalFolder(ctx: Pick<MarketplaceContext, "roots" | "cwd">, found: FoundMarketplace, records: FolderRecords = readFolderRecords(ctx)): string {
  const { name, sourceUri } = found.entry;
  const registryFile = found.paths.marketplacesRegistry;
  const field = `/marketplaces/${found.index ?? "?"}/sourceUri`;
  const where = `(${registryFile}, field ${field})`;
  const readd = `xcsh-tools marketplace remove ${name}${found.scope === "project" ? " --scope project" : ""}\` and \`xcsh-tools marketplace add <folder>${found.scope === "project" ? " --scope project" : ""}`;
  const folder = namedFolder(ctx, found.scope, sourceUri);
  if (folder === undefined) {
    throw new XcshToolsError("EMARKETPLACE_FOLDER_CHANGED", `The folder of local marketplace "${name}" ${JSON.stringify(sourceUri)} ${where} is not an absolute path`, {
      file: registryFile,
      path: field,
      hint: `Nothing was read. xcsh-tools records local marketplaces by absolute path: restore the entry, or run \`${readd}\`.`,
    });
  }
  if (found.scope === "project" && isRealPathInside(folder, ctx.cwd)) return realPathOrNearest(folder);
  const key = registryKey(registryFile);
  const known = records.registries[key];
  const recorded = known?.[name];
  if (!recorded) {
    // The user's registry from before identities were recorded: used as it is (header).
    if (found.scope === "user" && known === undefined) return realPathOrNearest(folder);
    if (found.scope === "project") {
      throw new XcshToolsError("EPATH_OUTSIDE", `The project marketplace "${name}" names the folder ${sourceUri} ${where}, outside the project ${ctx.cwd}, and it was not added on this machine`, {
        file: registryFile,
        path: field,
        hint: `Nothing was read. A project's registry may name folders inside the project (e.g. "./marketplace"); to use a folder elsewhere, add it yourself: \`${readd}\`.`,
      });
    }
    throw new XcshToolsError("EMARKETPLACE_FOLDER_CHANGED", `Local marketplace "${name}" ${where} names the folder ${sourceUri}, which xcsh-tools did not record when a marketplace was added`, {
      file: registryFile,
      path: field,
      hint: `Nothing was read. If you added this marketplace with another program or edited the file by hand, run \`${readd}\`.`,
    });
  }
  // A folder that is gone (same path) is reported by the read itself (ESOURCE_NOT_FOUND): nothing to read.
  const real = realPathOrNearest(folder);
  if (real === recorded.realPath) return real;
  throw new XcshToolsError("EMARKETPLACE_FOLDER_CHANGED", `The folder of local marketplace "${name}" ${sourceUri} ${where} resolves to ${real}, not the folder ${recorded.realPath} recorded when it was added`, {
    file: registryFile,
    path: field,
    hint: `Nothing was read. If you moved or re-created the folder yourself, run \`${readd}\`; otherwise restore ${registryFile}.`,
  });
}

/**
 * Stage the record of `registryFile`'s local folders after a change of that registry: `marketplaces`
 * is its new list; `added` names an entry the user just added (recorded as its folder is now).
 * Entries already recorded keep their record; a user registry without a key yet has every local
 * entry adopted as it is now (see the header); records of removed entries are dropped.
 */
export async function stageFolderRecords(
  tx: Transaction,
  ctx: Pick<MarketplaceContext, "roots" | "cwd" | "now">,
  scope: Scope,
  registryFile: string,
  marketplaces: readonly Pick<MarketplaceEntry, "name" | "sourceType" | "sourceUri">[],
  added?: string,
): Promise<void> {
  const records = readFolderRecords(ctx);
  const key = registryKey(registryFile);
  const before = records.registries[key];
  const adopt = before === undefined && scope === "user";
  const now = (ctx.now ? ctx.now() : new Date()).toISOString();
  const next: Record<string, FolderIdentity> = {};
  for (const entry of marketplaces) {
    if (entry.sourceType !== "local") continue;
    const kept = before?.[entry.name];
    if (kept && entry.name !== added) next[entry.name] = kept;
    else if (entry.name === added || adopt) {
      const folder = namedFolder(ctx, scope, entry.sourceUri);
      const identity = folder === undefined ? undefined : identityOf(folder, now);
      if (identity) next[entry.name] = identity;
    }
  }
  if (before !== undefined && JSON.stringify(before) === JSON.stringify(next)) return;
  if (before === undefined && Object.keys(next).length === 0 && !adopt) return;
  await tx.stageJson(folderRecordsFile(ctx), { version: 1, registries: { ...records.registries, [key]: next } } satisfies FolderRecords);
}
