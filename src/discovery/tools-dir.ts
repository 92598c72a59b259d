/**
 * Reading a tools directory, and resolving one explicit tool entry (a manifest `tools` entry or
 * a configured path). The model (docs/library-api.md, "Where tools come from"):
 *
 * - A tool is a file `*.ts|*.js|*.mjs` (not `*.d.ts`), or a folder holding `index.ts`, else
 *   `index.js`, else `index.mjs` (the first that exists is the module; the others are usually
 *   its build output, and loading both would only produce a name conflict).
 * - Scans are non-recursive. Dot-entries and `node_modules` are skipped silently.
 * - Entries are sorted by name (code-unit order, not locale order) so the load order, and
 *   therefore which of two same-named tools wins, is the same on every machine. Files and
 *   folders are sorted together.
 * - `.md`/`.json` files are metadata: reported in `metadata`, never handed to the loader (the
 *   host hands them over and then fails on them, and a `foo.md` can shadow `foo.ts`).
 * - Any other file (README.txt, run.sh, x.py) and folders without an index are reported in
 *   `ignored`, not as errors: the host turns every stray file into an error record,
 *   which buries the real failures.
 * - Symlinks are followed. A dangling one is an `EENTRY_NOT_FOUND` error: someone meant it to be
 *   a tool. With `within`, anything whose real path leaves that folder is `EENTRY_ESCAPE`.
 */
/*
 * The file system calls are synchronous on purpose: a scan makes a handful of stat/realpath/
 * readdir calls per entry, one after another, and each fs/promises call is a thread-pool round
 * trip costing more than the call itself (`npm run bench` measures the scan).
 */
import { readdirSync, realpathSync, type Dirent } from "node:fs";
import path from "node:path";
import { isPathInside } from "../core/contain.js";
import { statOrUndefined } from "../core/paths.js";
import { errorMessage, nodeErrorCode } from "../core/errors.js";
import type { ToolSource } from "../core/contract.js";
import { discoveryError } from "./records.js";
import type { DiscoverySink } from "./types.js";

const MODULE_EXTENSIONS = [".ts", ".js", ".mjs"];
const DECLARATION_SUFFIXES = [".d.ts", ".d.mts"];
const INDEX_FILES = ["index.ts", "index.js", "index.mjs"];

/** Options of a scan. */
export interface ScanOptions {
  /** Real path of a folder everything found must stay inside (a plugin package). */
  within?: string;
}

function isModuleFile(name: string): boolean {
  if (DECLARATION_SUFFIXES.some((suffix) => name.endsWith(suffix))) return false;
  return MODULE_EXTENSIONS.some((ext) => name.endsWith(ext));
}

function metadataKind(name: string): "md" | "json" | undefined {
  const lower = name.toLowerCase();
  if (lower.endsWith(".md")) return "md";
  if (lower.endsWith(".json")) return "json";
  return undefined;
}

/** The index module of a tool folder, if it has one. */
function findIndex(dir: string): string | undefined {
  return INDEX_FILES.map((name) => path.join(dir, name)).find((candidate) => statOrUndefined(candidate)?.isFile());
}

/** Report `file` as a tool unless its real path (its own path when unresolvable) escapes `within`. */
function addContained(file: string, source: ToolSource, sink: DiscoverySink, options: ScanOptions): void {
  const real = options.within === undefined ? file : realPathOr(file);
  if (options.within === undefined || isPathInside(real, options.within)) sink.addPath(file, source);
  else sink.addError(discoveryError("EENTRY_ESCAPE", file, `${file} resolves to ${real}, outside its package ${options.within}; it was not loaded.`, source));
}

function realPathOr(file: string): string {
  try {
    return realpathSync.native(file);
  } catch {
    return file;
  }
}

/**
 * Scan a tools directory. A missing directory is normal and reports nothing; one that exists but
 * cannot be listed is `ETOOLS_DIR`.
 */
export async function scanToolsDir(dir: string, source: ToolSource, sink: DiscoverySink, options: ScanOptions = {}): Promise<void> {
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch (error) {
    if (nodeErrorCode(error) === "ENOENT") return;
    sink.addError(discoveryError("ETOOLS_DIR", dir, `Cannot list the tools directory ${dir}: ${errorMessage(error)}`, source));
    return;
  }
  const names = entries
    .map((entry) => entry.name)
    .filter((name) => !name.startsWith(".") && name !== "node_modules")
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  for (const name of names) {
    const full = path.join(dir, name);
    const info = statOrUndefined(full);
    if (!info) {
      sink.addError(discoveryError("EENTRY_NOT_FOUND", full, `${full} is a symbolic link to something that does not exist.`, source));
      continue;
    }
    if (info.isDirectory()) {
      const index = findIndex(full);
      if (index) addContained(index, source, sink, options);
      else sink.addIgnored({ path: full, source, reason: `folder without ${INDEX_FILES.join(", ")}` });
      continue;
    }
    if (!info.isFile()) {
      sink.addIgnored({ path: full, source, reason: "not a regular file or folder" });
      continue;
    }
    const kind = metadataKind(name);
    if (kind) sink.addMetadata({ path: full, source, kind });
    else if (isModuleFile(name)) addContained(full, source, sink, options);
    else sink.addIgnored({ path: full, source, reason: "not a tool module (.ts, .js, .mjs)" });
  }
}

/**
 * Resolve one explicit entry: a module file is the tool, a folder with an index is that module,
 * a folder without one is scanned as a tools directory. Unlike a scan, a missing target, a file
 * that is not a module, or a folder that yields nothing at all is an error: somebody named it on
 * purpose. `what` names the entry in messages (a noun phrase naming the path).
 */
export async function resolveToolEntry(target: string, source: ToolSource, sink: DiscoverySink, options: ScanOptions & { what?: string } = {}): Promise<void> {
  const what = options.what ?? `tool path ${target}`;
  const info = statOrUndefined(target);
  if (!info) {
    sink.addError(discoveryError("EENTRY_NOT_FOUND", target, `The ${what} does not exist.`, source));
    return;
  }
  if (info.isDirectory()) {
    const index = findIndex(target);
    if (index) return addContained(index, source, sink, options);
    let found = 0;
    const counting: DiscoverySink = {
      ...sink,
      addPath: (p, s) => {
        found += 1;
        sink.addPath(p, s);
      },
      addError: (e) => {
        found += 1;
        sink.addError(e);
      },
    };
    await scanToolsDir(target, source, counting, options);
    if (found === 0) {
      sink.addError(
        discoveryError("ENOT_A_MODULE", target, `The ${what} is a folder with no index module and no tool modules in it.`, source),
      );
    }
    return;
  }
  const name = path.basename(target);
  if (info.isFile() && isModuleFile(name)) return addContained(target, source, sink, options);
  const why = metadataKind(name)
    ? ".md and .json files are metadata, never executable modules"
    : "a tool is a .ts, .js or .mjs module, or a folder with an index module";
  sink.addError(discoveryError("ENOT_A_MODULE", target, `The ${what} is not a tool module: ${why}.`, source));
}
