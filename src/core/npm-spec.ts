/**
 * semver and npm-package-arg, npm's own grammar of versions and package specs: the packages npm's
 * libraries load too, so there is one instance of each in the process (in the build's bundle, one
 * module each, shared by our code and theirs).
 */
import semverPackage from "semver";
import npaPackage from "npm-package-arg";

export const semver: typeof import("semver") = semverPackage;
export const npa: typeof import("npm-package-arg") = npaPackage;

/**
 * Whether `spec` is a version or a caret/tilde range of one (`^1.2.3`), what npm writes into a
 * package.json for a registry install: npa reads every such spec from the registry (a version, a
 * range, or a tag for a number too large for semver), never as git, a file, a URL or an alias, and
 * never throws on it (test/unit/npm-spec-fast.test.ts holds it against npa). Asked before npa, because npa's first call builds hosted-git-info's and
 * semver's parsers, a good part of a state change's own work.
 */
export function isRegistryVersionSpec(spec: string): boolean {
  // Each number as semver reads it strictly: no leading zero, and at most 15 digits (under
  // Number.MAX_SAFE_INTEGER). Anything else may read as a tag, which npa refuses with a `^` in it.
  return /^[~^]?(?:0|[1-9]\d{0,14})\.(?:0|[1-9]\d{0,14})\.(?:0|[1-9]\d{0,14})$/.test(spec);
}

/**
 * A lower-case package name of URL-safe characters (`@scope/name` or `name`) that does not end
 * like a tarball: when it is also valid for new packages (validate-npm-package-name), npa reads it
 * as itself with the range `*`, as `isRegistryVersionSpec` above (test/unit/npm-spec-fast.test.ts).
 */
export function looksLikePlainPackageName(name: string): boolean {
  return /^(?:@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*$/.test(name) && !/[.](?:tgz|tar\.gz|tar)$/i.test(name);
}
