/**
 * Test-only preload: `node --import <this file>?file=<policy.json> bin/xcsh-tools.js …` makes the
 * CLI read the organization policy from `file` instead of the platform's fixed place. It sets the
 * global seam of src/core/policy.ts (`MANAGED_POLICY_SEAM`) before main runs. It is not part of the
 * package (package.json "files"), reads no environment variable, and only code already running in
 * the process can set the symbol: it gives a user no lever they did not have.
 */
const file = new URL(import.meta.url).searchParams.get("file");
if (file) globalThis[Symbol.for("xcsh-tools.managed-policy-file")] = file;
