/**
 * Moving an npm project tree (package.json, package-lock.json, node_modules) between two
 * folders without breaking what points outside it.
 *
 * The applier copies the live plugins project into a staging folder, lets arborist reify there,
 * and swaps the result into place. Everything inside the tree is relative to the tree and moves
 * along unchanged. What points OUTSIDE it — a linked plugin (`node_modules/x -> ../../dev/x`),
 * the lockfile's keys and `resolved` fields for link targets (`"../../dev/x"`) and the
 * `file:` specs arborist saves — is written relative to the folder it was computed in, so it is
 * wrong in the other one. `rebaseTree(dir, from, to)` rewrites exactly those references of the
 * tree physically at `dir`, from "relative to `from`" to "relative to `to`"; references inside
 * the tree, absolute ones and URLs are left alone.
 *
 * Touched: top-level (and scoped) symlinks of `node_modules`, `package-lock.json` and
 * `node_modules/.package-lock.json` (keys of `packages`, `resolved` of link entries, `file:`
 * values of every entry's dependency maps), and `file:` values of package.json's dependencies.
 */
import type { Dirent } from "node:fs";
import { readdir, readlink, symlink, unlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { readTextBounded } from "../core/bounded-read.js";
import { jsonText } from "../core/atomic-fs.js";
import { isPathInside } from "../core/contain.js";
import { isRecord } from "../manifest/result.js";

function posix(p: string): string {
  return p.split(path.sep).join("/");
}

/** A root-relative path computed in `from`, re-expressed for `to` (unchanged when inside). */
function remapRel(rel: string, from: string, to: string): string {
  if (path.isAbsolute(rel)) return rel;
  const abs = path.resolve(from, rel);
  if (isPathInside(abs, from)) return rel;
  return posix(path.relative(to, abs));
}

function remapFileSpec(spec: string, from: string, to: string): string {
  if (!spec.startsWith("file:")) return spec;
  const rest = spec.slice("file:".length);
  if (rest.startsWith("/") || rest.startsWith("//")) return spec;
  return `file:${remapRel(rest, from, to)}`;
}

const DEP_FIELDS = ["dependencies", "devDependencies", "optionalDependencies", "peerDependencies"] as const;

function remapDeps(entry: Record<string, unknown>, from: string, to: string): void {
  for (const field of DEP_FIELDS) {
    const deps = entry[field];
    if (!isRecord(deps)) continue;
    for (const [name, spec] of Object.entries(deps)) if (typeof spec === "string") deps[name] = remapFileSpec(spec, from, to);
  }
}

async function rebaseLockfile(file: string, from: string, to: string): Promise<void> {
  let text: string;
  try {
    const read = readTextBounded(file);
    if (read === undefined) return;
    text = read;
  } catch {
    return;
  }
  const lock = JSON.parse(text) as Record<string, unknown>;
  const packages = lock.packages;
  if (!isRecord(packages)) return;
  const next: Record<string, unknown> = {};
  let changed = false;
  for (const [key, value] of Object.entries(packages)) {
    const newKey = key === "" || key.startsWith("node_modules/") ? key : remapRel(key, from, to);
    if (newKey !== key) changed = true;
    if (isRecord(value)) {
      const before = JSON.stringify(value);
      if (value.link === true && typeof value.resolved === "string") value.resolved = remapRel(value.resolved, from, to);
      if (typeof value.resolved === "string" && value.resolved.startsWith("file:")) value.resolved = remapFileSpec(value.resolved, from, to);
      remapDeps(value, from, to);
      if (JSON.stringify(value) !== before) changed = true;
    }
    next[newKey] = value;
  }
  if (!changed) return;
  lock.packages = next;
  const indent = /^\{\r?\n(\s+)/.exec(text)?.[1] ?? "  ";
  await writeFile(file, `${JSON.stringify(lock, null, indent)}\n`);
}

async function rebaseLinks(nodeModules: string, logicalNodeModules: { from: string; to: string }, from: string): Promise<void> {
  let entries: Dirent[];
  try {
    // With their types: an lstat per package would be a thread-pool round trip each.
    entries = await readdir(nodeModules, { withFileTypes: true });
  } catch {
    return;
  }
  for (const dirent of entries) {
    const name = dirent.name;
    const entry = path.join(nodeModules, name);
    if (name.startsWith("@")) {
      await rebaseLinks(entry, { from: path.join(logicalNodeModules.from, name), to: path.join(logicalNodeModules.to, name) }, from);
      continue;
    }
    if (!dirent.isSymbolicLink()) continue;
    const target = await readlink(entry);
    if (path.isAbsolute(target)) continue;
    const abs = path.resolve(logicalNodeModules.from, target);
    if (isPathInside(abs, from)) continue;
    const rebased = path.relative(logicalNodeModules.to, abs);
    if (rebased === target) continue;
    await unlink(entry);
    await symlink(rebased, entry, "junction");
  }
}

/** Rewrite the outside references of the tree at `dir` from relative-to-`from` to relative-to-`to`. */
export async function rebaseTree(dir: string, from: string, to: string): Promise<void> {
  if (path.resolve(from) === path.resolve(to)) return;
  await rebaseLinks(path.join(dir, "node_modules"), { from: path.join(from, "node_modules"), to: path.join(to, "node_modules") }, from);
  await rebaseLockfile(path.join(dir, "package-lock.json"), from, to);
  await rebaseLockfile(path.join(dir, "node_modules", ".package-lock.json"), from, to);
  const pkgFile = path.join(dir, "package.json");
  try {
    const text = readTextBounded(pkgFile);
    if (text === undefined) throw Object.assign(new Error(`${pkgFile} does not exist`), { code: "ENOENT" });
    const pkg = JSON.parse(text) as Record<string, unknown>;
    const before = JSON.stringify(pkg);
    remapDeps(pkg, from, to);
    if (JSON.stringify(pkg) !== before) await writeFile(pkgFile, jsonText(pkg));
  } catch {
    // no package.json: nothing to rebase
  }
}
