/**
 * Path containment: the one place that decides whether a path stays inside a folder.
 *
 * Every path that comes from untrusted input (a project file, a catalog, a manifest, a tarball,
 * a registry answer, or a path read back from a state file, even one in the user's own
 * `~/.xcsh`) is checked here before it is read, imported, replaced or deleted. The check is made
 * on real paths: symlinks are resolved first, for the path and for the folder it must stay in, so
 * a symlinked folder, `/proc/self/root/...` or `..` segments cannot lead outside.
 *
 * "Inside" means the folder itself or anything below it. A name that merely starts with two dots
 * (`..foo`) is inside; `..` and `../x` are not.
 */
import { lstatSync, readlinkSync, realpathSync } from "node:fs";
import path from "node:path";
import { XcshToolsError, nodeErrorCode } from "./errors.js";

/** True when `child` is `parent` or below it. Lexical: both are resolved, no symlink is followed. */
export function isPathInside(child: string, parent: string): boolean {
  const rel = path.relative(path.resolve(parent), path.resolve(child));
  if (rel === "") return true;
  if (path.isAbsolute(rel)) return false;
  return rel !== ".." && !rel.startsWith(`..${path.sep}`);
}

/** True when `child` is strictly below `parent` (never the folder itself). Lexical. */
export function isPathBelow(child: string, parent: string): boolean {
  return isPathInside(child, parent) && path.resolve(child) !== path.resolve(parent);
}

/** A path in normal form on POSIX: absolute, no `.`/`..` segment, no doubled or trailing separator. */
const NOT_NORMAL = /\/\/|\/\.\.?(?:\/|$)|.\/$/;

/**
 * `isPathInside` against several folders, for many paths: the folders are resolved once, and a
 * path already in normal form is judged by a string prefix, which is exactly what `isPathInside`
 * answers for it, without resolving and relating both sides again for every pair. A path in any
 * other form (relative, with `..`, on Windows) goes through `isPathInside` itself. For checks that
 * run over every recorded tool path at each host start (the boot index), where the per-call path
 * work showed in `npm run bench`.
 */
export function insideAnyOf(parents: readonly string[]): (child: string) => boolean {
  const resolved = parents.map((p) => path.resolve(p));
  const prefixes = resolved.map((p) => (p.endsWith(path.sep) ? p : `${p}${path.sep}`));
  return (child) => {
    if (path.sep !== "/" || !child.startsWith("/") || NOT_NORMAL.test(child)) return resolved.some((parent) => isPathInside(child, parent));
    for (let i = 0; i < resolved.length; i++) if (child === resolved[i] || child.startsWith(prefixes[i]!)) return true;
    return false;
  };
}

/**
 * The real path of `p`; for a path that does not exist (yet), the real path of its nearest
 * existing ancestor with the rest appended, so that a path about to be created is judged by
 * where it would really land.
 */
export function realPathOrNearest(p: string): string {
  const absolute = path.resolve(p);
  const missing: string[] = [];
  let current = absolute;
  for (;;) {
    try {
      const real = realpathSync.native(current);
      return missing.length === 0 ? real : path.join(real, ...missing.reverse());
    } catch (error) {
      const code = nodeErrorCode(error);
      if (code !== "ENOENT" && code !== "ENOTDIR") throw error;
      const parent = path.dirname(current);
      if (parent === current) return absolute;
      missing.push(path.basename(current));
      current = parent;
    }
  }
}

/** True when `child` stays inside `parent` once symlinks are resolved on both sides. */
export function isRealPathInside(child: string, parent: string): boolean {
  return isPathInside(realPathOrNearest(child), realPathOrNearest(parent));
}

/** True when `child` is strictly below `parent` once symlinks are resolved on both sides (for what is deleted). */
export function isRealPathBelow(child: string, parent: string): boolean {
  return isPathBelow(realPathOrNearest(child), realPathOrNearest(parent));
}

/**
 * True when a relative path as written in a file (a manifest entry, a catalog source, a tarball
 * link; `/` or `\` separators) climbs out of the folder it is relative to with `..`. Lexical: for
 * paths checked before anything exists on disk; whether an absolute path is allowed at all is the
 * caller's rule (each says so in its own message).
 */
export function relativePathClimbsOut(relative: string): boolean {
  const normal = path.posix.normalize(relative.replace(/\\/g, "/"));
  return normal === ".." || normal.startsWith("../");
}

/** Where a checked path came from, for the error: the file and the field that named it. */
export interface PathOrigin {
  /** What kind of path this is, e.g. "install path", "marketplace install location". */
  what: string;
  /** The file the path was read from, when there is one. */
  file?: string;
  /** The field (JSON pointer or dotted name) inside `file`. */
  field?: string;
  /** How to fix it; a generic hint is used otherwise. */
  hint?: string;
}

/** " (file, field f)", " (field f)" or "": where a checked path came from, for a message. */
export function describeOrigin(origin: Pick<PathOrigin, "file" | "field">): string {
  return origin.file ? ` (${origin.file}${origin.field ? `, field ${origin.field}` : ""})` : origin.field ? ` (field ${origin.field})` : "";
}

export interface ConfineOptions {
  /** The folder itself is not allowed, only what is below it (for anything that is deleted). */
  strictlyBelow?: boolean;
  /** Whose folder `root` is, for the fix a link out of it gets (a user's dotfiles, or a project's state). */
  scope?: "user" | "project";
  /**
   * The path itself, never what a link at it leads to: for a removal, or a swap that renames over
   * the path (a folder or a link replacing it), both of which act on the link and leave its target
   * untouched. Only the folders above the path are resolved (`ownRealPath`).
   */
  own?: boolean;
}

/**
 * The real path of `p` when `p` itself is a symbolic link: its folder resolved, its own name kept.
 * Anything else: `realPathOrNearest`.
 */
export function ownRealPath(p: string): string {
  const absolute = path.resolve(p);
  if (!lstatSync(absolute, { throwIfNoEntry: false })?.isSymbolicLink()) return realPathOrNearest(absolute);
  return path.join(realPathOrNearest(path.dirname(absolute)), path.basename(absolute));
}

/**
 * The real path of `p`, checked to stay inside `root` (also resolved): the one gate for every
 * path from untrusted input, and for where a write or removal of a state file lands. Throws
 * `EPATH_OUTSIDE` naming the file and field otherwise; the caller then reads, imports, replaces
 * or deletes nothing.
 *
 * The rule for symbolic links at a state file's place is this check: a link there (the file
 * itself, or a folder on its way below `root`) is followed only when its real target stays inside
 * `root`, and the error names the link and the fix. Why (docs/security.md, "Links at a state
 * file's place"): a rename onto a followed link replaces its target, and whoever made the link
 * chose that target. For project state that is whoever can write the project's `.xcsh/` (a clone,
 * a once-trusted repository), so its links may never leave that `.xcsh/`, not even into the user's
 * own state. For user state it is usually the user, but a dotfiles link cannot be told from one to
 * `~/.bashrc` by looking at it, so the rule is the same: a dotfiles manager keeps the whole xcsh
 * root in its repository (GNU stow's folded link, `XCSH_HOME`), which passes because `root` is
 * resolved too.
 */
export function confinePath(p: string, root: string, origin: PathOrigin, options: ConfineOptions = {}): string {
  const real = options.own ? ownRealPath(p) : realPathOrNearest(p);
  const realRoot = realPathOrNearest(root);
  const inside = options.strictlyBelow ? isPathBelow(real, realRoot) : isPathInside(real, realRoot);
  if (inside) return real;
  const resolved = real === path.resolve(p) ? "" : ` (resolves to ${real})`;
  const link = isPathInside(p, root) ? linkOnTheWay(p, root) : undefined;
  const fallback = `Nothing was read, replaced or deleted. If ${origin.file ?? "the state file"} was edited by hand or by another program, restore it, or run \`xcsh-tools doctor\` to see what is wrong.`;
  throw new XcshToolsError(
    "EPATH_OUTSIDE",
    `The ${origin.what} ${p}${resolved}${describeOrigin(origin)} is ${options.strictlyBelow && real === realRoot ? "the folder" : "outside the folder"} ${realRoot} where it must live${link ? `: it leads there through the link ${link.link} -> ${link.target}` : ""}`,
    {
      ...(origin.file ? { file: origin.file } : link ? { file: p } : {}),
      ...(origin.field ? { path: origin.field } : {}),
      hint: link
        ? `Nothing was changed. Remove the link ${link.link}: xcsh-tools makes what belongs there again when it is needed.${
            options.scope === "user" ? ` To keep your xcsh state in a dotfiles repository, link (or point XCSH_HOME at) the whole folder ${root} there, not single files.` : options.scope === "project" ? " A project's state stays inside its own .xcsh folder." : ""
          }`
        : (origin.hint ?? fallback),
    },
  );
}

/**
 * The outermost symbolic link on the way from `root` down to `p` (lexically: `p` itself or a
 * folder between them) and what it says; `undefined` when there is none.
 */
function linkOnTheWay(p: string, root: string): { link: string; target: string } | undefined {
  const stop = path.resolve(root);
  let found: string | undefined;
  for (let current = path.resolve(p); current !== stop && path.dirname(current) !== current; current = path.dirname(current)) {
    if (lstatSync(current, { throwIfNoEntry: false })?.isSymbolicLink()) found = current;
  }
  return found === undefined ? undefined : { link: found, target: readlinkSync(found) };
}
