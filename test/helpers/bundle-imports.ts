/**
 * What a built bundle still imports, read from its text, for the tests of the bundling steps
 * (test/unit/child-bundle.test.ts, test/e2e/cli-bundle.test.ts). Read here independently of the
 * build scripts' own check, which the tests verify.
 */
import { readFileSync } from "node:fs";
import { builtinModules } from "node:module";
import path from "node:path";
import { REPO } from "./build-dist.js";

const builtins = new Set(builtinModules);

/** The package a bare specifier names (`@scope/name/sub` -> `@scope/name`). */
export const packageOf = (specifier: string): string => (specifier.startsWith("@") ? specifier.split("/").slice(0, 2).join("/") : specifier.split("/")[0]!);

/** The packages our package.json depends on. */
export const ownDependencies = (): Set<string> =>
  new Set(Object.keys((JSON.parse(readFileSync(path.join(REPO, "package.json"), "utf8")) as { dependencies: Record<string, string> }).dependencies));

/** Every specifier an ES module's text imports (static, side-effect only, dynamic with a literal) that is not a Node built-in. */
export function nonBuiltinImports(text: string): string[] {
  return [
    ...text.matchAll(/^\s*(?:import|export)\b[^;"'`]*?\bfrom\s*["']([^"']+)["']/gm),
    ...text.matchAll(/^\s*import\s*["']([^"']+)["']/gm),
    ...text.matchAll(/\bimport\s*\(\s*["']([^"']+)["']\s*\)/g),
  ]
    .map((m) => m[1]!)
    .filter((s) => !s.startsWith("node:") && !builtins.has(s));
}
