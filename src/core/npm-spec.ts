/**
 * semver and npm-package-arg, npm's own grammar of versions and package specs: the packages npm's
 * libraries load too, so there is one instance of each in the process (in the build's bundle, one
 * module each, shared by our code and theirs).
 */
import semverPackage from "semver";
import npaPackage from "npm-package-arg";

export const semver: typeof import("semver") = semverPackage;
export const npa: typeof import("npm-package-arg") = npaPackage;
