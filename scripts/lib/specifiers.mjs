/**
 * Module specifiers, for the bundling steps' externals and for their checks of what a built
 * bundle still imports (scripts/bundle-*.mjs).
 */
import { readFileSync } from "node:fs";
import { builtinModules } from "node:module";
import path from "node:path";

const builtins = new Set(builtinModules);

/** The package a bare specifier names (`@scope/name/sub` -> `@scope/name`). */
export const packageOf = (id) => (id.startsWith("@") ? id.split("/").slice(0, 2).join("/") : id.split("/")[0]);
/** A package name, not a path nor a bundler's virtual module. */
export const isBare = (id) => !id.startsWith(".") && !path.isAbsolute(id) && !id.startsWith("\0");
/** A Node built-in, with or without `node:`. */
export const isBuiltin = (id) => id.startsWith("node:") || builtins.has(id);

/** The packages our package.json depends on (what a bundle may leave outside). */
export function ownDependencies(repo) {
  return new Set(Object.keys(JSON.parse(readFileSync(path.join(repo, "package.json"), "utf8")).dependencies ?? {}));
}

/** The module specifiers an ES module bundle still imports (static, side-effect only and dynamic with a literal). */
export function importsOf(text) {
  return [
    ...text.matchAll(/^\s*(?:import|export)\b[^;"'`]*?\bfrom\s*["']([^"']+)["']/gm),
    ...text.matchAll(/^\s*import\s*["']([^"']+)["']/gm),
    ...text.matchAll(/\bimport\s*\(\s*["']([^"']+)["']\s*\)/g),
  ].map((m) => m[1]);
}
