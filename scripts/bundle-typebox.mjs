#!/usr/bin/env node
/**
 * Build step after `tsc`: replace <dist>/manifest/typebox.js (re-exports from @sinclair/typebox)
 * with one module holding the TypeBox code it re-exports, so that the CLI loads one file instead
 * of ~270 (see src/manifest/typebox.ts for why). Rolldown is vitest's own bundler (via vite).
 * The result is checked: it must import nothing but Node built-ins and export what the source does.
 */
import { readFileSync, renameSync, rmSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build } from "rolldown";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
// `node scripts/bundle-typebox.mjs [dist folder]` (bench/boot.js builds into a folder of its own).
const dist = path.resolve(process.argv[2] ?? path.join(repo, "dist"));
const target = path.join(dist, "manifest", "typebox.js");
const temp = `${target}.${process.pid}.bundle.js`;

const before = Object.keys(await import(pathToFileURL(target).href)).sort();
try {
  await build({
    input: target,
    platform: "node",
    logLevel: "warn",
    output: { file: temp, format: "esm", comments: { legal: true, annotation: false, jsdoc: false } },
  });
  const text = readFileSync(temp, "utf8");
  const imports = [...text.matchAll(/^\s*import\b[^"']*["']([^"']+)["']/gm)].map((m) => m[1]).filter((s) => !s.startsWith("node:"));
  if (imports.length > 0) throw new Error(`the bundle still imports ${imports.join(", ")}`);
  const after = Object.keys(await import(`${pathToFileURL(temp).href}?check`)).sort();
  if (JSON.stringify(after) !== JSON.stringify(before)) throw new Error(`the bundle exports ${after.join(", ")}, the source ${before.join(", ")}`);
  renameSync(temp, target);
} catch (error) {
  rmSync(temp, { force: true });
  console.error(`bundle-typebox: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
