#!/usr/bin/env node
/**
 * The build's steps after `tsc`, in order, for `npm run build` and the tests' build
 * (test/helpers/build-dist.ts): one place that knows them.
 * - bundle-typebox: the part of TypeBox our own schemas use, one module (src/manifest/typebox.ts);
 * - bundle-npm: pacote and arborist, one CommonJS file, and semver with npm-package-arg, which
 *   they share with our code, another (src/plugins/npm-client.ts, src/core/npm-spec.ts);
 * - bundle-child: the validation child, one module (after bundle-typebox, whose module it holds);
 * - bundle-cli: the CLI program, one more module beside its separate ones (after bundle-typebox).
 *
 *   node scripts/bundle.mjs [dist folder]
 */
import { spawnSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
for (const step of ["bundle-typebox.mjs", "bundle-npm.mjs", "bundle-child.mjs", "bundle-cli.mjs"]) {
  const result = spawnSync(process.execPath, [path.join(here, step), ...process.argv.slice(2)], { stdio: "inherit" });
  if (result.status !== 0) process.exit(result.status ?? 1);
}
