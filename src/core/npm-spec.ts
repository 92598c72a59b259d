/**
 * semver and npm-package-arg, npm's own grammar of versions and package specs, for our code and
 * for npm's libraries: one instance of each in the process. Once built they come from one file,
 * <dist>/vendor/npm-spec.cjs (scripts/bundle-npm.mjs), which holds every module of theirs the
 * npm bundle requires, by specifier; src/plugins/npm-client.ts hands those to the npm bundle
 * through its require cache. As packages they were ~45 CommonJS files that every command parsing
 * a spec or a version loaded, ~25 ms of its start on Node 20 and 22; the one file loads in a few.
 * Running from the TypeScript sources, the packages themselves.
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

type Semver = typeof import("semver");
type Npa = typeof import("npm-package-arg");

const requireHere = createRequire(import.meta.url);
const bundle = fileURLToPath(new URL("../vendor/npm-spec.cjs", import.meta.url));

/** The modules by the specifier npm's libraries require them with (`semver`, `semver/functions/clean`…); undefined from the sources. */
export const npmSpecModules: Readonly<Record<string, unknown>> | undefined = existsSync(bundle) ? (requireHere(bundle) as Record<string, unknown>) : undefined;

export const semver: Semver = (npmSpecModules?.semver ?? requireHere("semver")) as Semver;
export const npa: Npa = (npmSpecModules?.["npm-package-arg"] ?? requireHere("npm-package-arg")) as Npa;
