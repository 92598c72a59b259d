/**
 * semver and npm-package-arg, npm's own grammar of versions and package specs: the packages npm's
 * libraries load too, so there is one instance of each in the process.
 */
import { createRequire } from "node:module";

type Semver = typeof import("semver");
type Npa = typeof import("npm-package-arg");

const requireHere = createRequire(import.meta.url);

export const semver: Semver = requireHere("semver") as Semver;
export const npa: Npa = requireHere("npm-package-arg") as Npa;
