#!/usr/bin/env node
/**
 * `npm run conformance:record`: record what the pinned Claude Code says of every fixture of
 * test/fixtures/conformance/ into verdicts.json, so that `npm test` can compare our verdicts with
 * its verdicts without ever running Claude Code (it is proprietary and needs no place in CI).
 *
 * - The pin is package.json "conformance.claudeCode". Moving it and running this script is the
 *   whole re-pin: the script prints what changed from the previous verdicts.json.
 * - Claude Code is installed from the npm registry into a cache of its own
 *   ($XDG_CACHE_HOME or ~/.cache)/xcsh-tools-conformance/claude-code-<version>, never into the
 *   repository's node_modules, with --ignore-scripts: its postinstall only copies the platform
 *   binary, which cli-wrapper.cjs finds by itself.
 * - Each fixture is copied (without its case.json) into a temporary folder and checked there by
 *   `claude plugin validate --json <folder>` under a temporary HOME, logged out, with
 *   non-essential traffic off: the validator reads files only.
 * - Then the install cases (test/fixtures/conformance/install/): scripts/conformance/install.mjs
 *   installs each with Claude Code and records what it installed into installs.json.
 * - Refuses to run in CI (CI=true): the recorded file is committed, CI compares against it.
 * - Then records what `claude plugin details` says of the plugins of inventory/ into
 *   inventory.json (scripts/conformance/inventory.mjs).
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { recordInstalls } from "./conformance/install.mjs";
import { checkVersion, cleanEnv, installPinned, refuseInCI, repo } from "./conformance/pinned.mjs";

const fixturesDir = path.join(repo, "test", "fixtures", "conformance");
const verdictsFile = path.join(fixturesDir, "verdicts.json");

refuseInCI("conformance:record does not run in CI: record on a developer machine and commit verdicts.json.");

/** Fixture-relative, machine-independent text: the temporary folder becomes `<fixture>`. */
function scrub(text, dir) {
  if (typeof text !== "string") return text;
  return text.split(dir + path.sep).join("").split(dir).join("<fixture>");
}

function findings(list, file, dir) {
  return (list ?? []).map((f) => ({ file: scrub(file, dir) || ".", path: f.path ?? "", message: scrub(f.message ?? "", dir) }));
}

function record(id, home) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `cc-conformance-${id}-`));
  const target = path.join(dir, "fixture");
  fs.cpSync(path.join(fixturesDir, id), target, { recursive: true });
  fs.rmSync(path.join(target, "case.json"), { force: true });
  const r = spawnSync(process.execPath, [wrapper, "plugin", "validate", "--json", target], { env: cleanEnv(home), encoding: "utf8", timeout: 120_000 });
  let report;
  try {
    report = JSON.parse(r.stdout);
  } catch {
    report = undefined;
  }
  const errors = [];
  const warnings = [];
  if (report) {
    for (const part of [report.manifest, ...(report.contents ?? [])]) {
      if (!part) continue;
      errors.push(...findings(part.errors, part.file, target));
      warnings.push(...findings(part.warnings, part.file, target));
    }
  } else {
    // No JSON (a usage error): keep what it printed so the difference is visible in review.
    errors.push({ file: ".", path: "", message: scrub(`${r.stderr ?? ""}${r.stdout ?? ""}`.trim(), target) });
  }
  fs.rmSync(dir, { recursive: true, force: true });
  const byText = (a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b));
  return { verdict: r.status === 0 && errors.length === 0 ? "pass" : "fail", exit: r.status, errors: errors.sort(byText), warnings: warnings.sort(byText) };
}

/** The value with every object's keys sorted, so that equal findings stringify alike. */
const sortKeys = (v) => (Array.isArray(v) ? v.map(sortKeys) : v && typeof v === "object" ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, sortKeys(v[k])])) : v);

/** JSON with every object's keys sorted, two-space indent, trailing newline. */
function canonical(value) {
  return JSON.stringify(sortKeys(value), null, 2) + "\n";
}

function printDifferences(before, after) {
  const lines = [];
  if (before.claudeCode !== after.claudeCode) lines.push(`Claude Code ${before.claudeCode} -> ${after.claudeCode}`);
  const ids = new Set([...Object.keys(before.fixtures ?? {}), ...Object.keys(after.fixtures)]);
  for (const id of [...ids].sort()) {
    const a = before.fixtures?.[id];
    const b = after.fixtures[id];
    if (!a) { lines.push(`+ ${id}: ${b.verdict}`); continue; }
    if (!b) { lines.push(`- ${id} (fixture removed)`); continue; }
    if (a.verdict !== b.verdict || a.exit !== b.exit) lines.push(`~ ${id}: ${a.verdict} (exit ${a.exit}) -> ${b.verdict} (exit ${b.exit})`);
    for (const kind of ["errors", "warnings"]) {
      const was = new Set(a[kind].map((x) => JSON.stringify(sortKeys(x))));
      const now = new Set(b[kind].map((x) => JSON.stringify(sortKeys(x))));
      for (const x of now) if (!was.has(x)) lines.push(`  ${id} new ${kind.slice(0, -1)}: ${x}`);
      for (const x of was) if (!now.has(x)) lines.push(`  ${id} gone ${kind.slice(0, -1)}: ${x}`);
    }
  }
  console.log(lines.length ? lines.join("\n") : "No differences from the previous verdicts.json.");
}

const pinned = installPinned();
const { version, wrapper } = pinned;
const home = fs.mkdtempSync(path.join(os.tmpdir(), "cc-conformance-home-"));
try {
  checkVersion(pinned, home);
  // Fixtures carry a case.json; other folders (install/, inventory/) are other recorders' corpora.
  const ids = fs.readdirSync(fixturesDir, { withFileTypes: true }).filter((d) => d.isDirectory() && d.name !== "install" && fs.existsSync(path.join(fixturesDir, d.name, "case.json"))).map((d) => d.name).sort();
  const fixtures = {};
  for (const id of ids) fixtures[id] = record(id, home);
  const after = { claudeCode: version, fixtures };
  const before = fs.existsSync(verdictsFile) ? JSON.parse(fs.readFileSync(verdictsFile, "utf8")) : { fixtures: {} };
  fs.writeFileSync(verdictsFile, canonical(after));
  printDifferences(before, after);
  await recordInstalls({ fixturesDir, version, wrapper, envOf: cleanEnv, canonical });
  const failing = Object.values(fixtures).filter((f) => f.verdict === "fail").length;
  console.error(`Recorded ${ids.length} fixtures with Claude Code ${version} (${ids.length - failing} pass, ${failing} fail) into ${path.relative(repo, verdictsFile)}.`);
  (await import("./conformance/inventory.mjs")).recordInventoryFile({ fixturesDir: path.join(fixturesDir, "inventory"), file: path.join(fixturesDir, "inventory.json"), version, canonical, run: (args) => spawnSync(process.execPath, [wrapper, ...args], { env: cleanEnv(home), encoding: "utf8", timeout: 120_000 }) });
} finally {
  fs.rmSync(home, { recursive: true, force: true });
}
