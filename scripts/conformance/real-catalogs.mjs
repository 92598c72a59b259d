#!/usr/bin/env node
/**
 * Hand-run measurement of issue 45's target on real public marketplaces: do `xcsh-tools validate
 * --static` and the pinned `claude plugin validate` give the same verdict on every catalog and
 * every in-repo plugin? Their text is not ours to commit, so this never runs in `npm test` or CI;
 * each disagreement it finds becomes a fresh fixture of test/fixtures/conformance/ instead.
 *
 *   node scripts/conformance/real-catalogs.mjs <folder>            # one checked-out marketplace per subfolder
 *   node scripts/conformance/real-catalogs.mjs --mirrors <folder>  # <folder>/<owner>+<name>/repo bare git repos: HEAD is exported
 *   options: --only <owner+name>[,...]   --jobs <n> (default 2)
 *            --details: also install every in-repo plugin from a local copy of its catalog, with
 *            Claude Code and with xcsh-tools (each in a HOME of its own), and compare
 *            `claude plugin details` with `xcsh-tools show --json` as
 *            test/integration/conformance-inventory.test.ts does: names by kind exactly, the
 *            always-on total within 5% (1 token under 20).
 *
 * Local folders only: Claude Code runs under a temporary HOME, logged out, non-essential traffic
 * off (scripts/conformance/pinned.mjs), and validating reads files only.
 * Prints per marketplace "agree N/N" and every disagreement with both sides' errors.
 */
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { parseDetails } from "./inventory.mjs";
import { checkVersion, cleanEnv, installPinned, refuseInCI, repo } from "./pinned.mjs";

refuseInCI("real-catalogs.mjs does not run in CI: it reads public marketplaces with the pinned Claude Code, by hand.");

const { values, positionals } = parseArgs({ allowPositionals: true, options: { mirrors: { type: "string" }, only: { type: "string" }, jobs: { type: "string", default: "2" }, details: { type: "boolean", default: false } } });
if (!values.mirrors && positionals.length !== 1) {
  console.error("usage: real-catalogs.mjs <folder of checked-out marketplaces> | --mirrors <folder of <owner>+<name>/repo bare repositories>");
  process.exit(2);
}

/** Run a program to completion without blocking the others: {status, stdout, stderr}. */
function run(file, args, options) {
  return new Promise((resolve) => {
    const child = spawn(file, args, { ...options, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("close", (status) => resolve({ status, stdout, stderr }));
  });
}

/** `items` mapped by `fn`, at most `jobs` at a time, in order. */
async function pool(items, jobs, fn) {
  const out = new Array(items.length);
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(jobs, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i], i);
    }
  }));
  return out;
}

/**
 * HEAD of a bare repository written into `dir`, as `git archive HEAD | tar -x` would, but
 * tolerating blobs a mirror lacks (its largest files may be listed but absent): those are left
 * out and returned. Written by hand because git archive stops at the first absent blob.
 */
function exportHead(gitDir, dir) {
  const listing = execFileSync("git", ["--git-dir", gitDir, "ls-tree", "-r", "-z", "HEAD"], { maxBuffer: 1 << 30 }).toString("utf8");
  let entries = listing.split("\0").filter(Boolean).map((line) => {
    const [meta, file] = [line.slice(0, line.indexOf("\t")), line.slice(line.indexOf("\t") + 1)];
    const [mode, type, sha] = meta.split(" ");
    return { mode, type, sha, file };
  });
  // A submodule is an empty folder, as in git archive's output and a clone without --recursive.
  for (const e of entries.filter((e) => e.type === "commit")) fs.mkdirSync(path.join(dir, e.file), { recursive: true });
  entries = entries.filter((e) => e.type === "blob");
  const batch = execFileSync("git", ["--git-dir", gitDir, "cat-file", "--batch"], { input: entries.map((e) => e.sha).join("\n") + "\n", maxBuffer: 2 ** 31 });
  const missing = [];
  let at = 0;
  for (const entry of entries) {
    const eol = batch.indexOf(10, at);
    const header = batch.subarray(at, eol).toString("utf8");
    at = eol + 1;
    if (header.endsWith(" missing")) {
      missing.push(entry.file);
      continue;
    }
    const size = Number(header.split(" ")[2]);
    const content = batch.subarray(at, at + size);
    at += size + 1;
    const target = path.join(dir, entry.file);
    if (path.relative(dir, target).startsWith("..")) continue;
    fs.mkdirSync(path.dirname(target), { recursive: true });
    if (entry.mode === "120000") fs.symlinkSync(content.toString("utf8"), target);
    else fs.writeFileSync(target, content, { mode: entry.mode === "100755" ? 0o755 : 0o644 });
  }
  return missing;
}

/** The marketplaces to measure: [{name, dir}], exporting mirrors' HEAD into `scratch` first. */
function marketplaces(scratch) {
  const only = values.only ? new Set(values.only.split(",")) : null;
  const root = path.resolve(values.mirrors ?? positionals[0]);
  const names = fs.readdirSync(root, { withFileTypes: true }).filter((d) => d.isDirectory() && (!only || only.has(d.name))).map((d) => d.name).sort();
  const out = [];
  for (const name of names) {
    let dir = path.join(root, name);
    if (values.mirrors) {
      const gitDir = path.join(dir, "repo");
      if (!fs.existsSync(gitDir)) continue;
      try {
        execFileSync("git", ["--git-dir", gitDir, "cat-file", "-e", "HEAD:.claude-plugin/marketplace.json"], { stdio: "ignore" });
      } catch {
        continue; // not a marketplace (a mirror of something else)
      }
      dir = path.join(scratch, name);
      fs.mkdirSync(dir);
      const missing = exportHead(gitDir, dir);
      if (missing.length) console.log(`${name}: ${missing.length} file(s) absent from the mirror, left out: ${missing.slice(0, 5).join(", ")}${missing.length > 5 ? ", ..." : ""}`);
    }
    if (fs.existsSync(path.join(dir, ".claude-plugin", "marketplace.json"))) out.push({ name, dir, index: out.length + 1 });
  }
  return out;
}

/**
 * The folders judged for one marketplace: the catalog's, then every in-repo plugin (a string
 * source, `./`-relative to the marketplace root, or under metadata.pluginRoot) that exists and
 * stays inside the marketplace.
 */
function targets(market) {
  const out = [{ label: "(catalog)", dir: market.dir }];
  let catalog;
  try {
    catalog = JSON.parse(fs.readFileSync(path.join(market.dir, ".claude-plugin", "marketplace.json"), "utf8"));
  } catch {
    return out;
  }
  const pluginRoot = typeof catalog?.metadata?.pluginRoot === "string" ? catalog.metadata.pluginRoot : ".";
  const seen = new Set();
  for (const entry of Array.isArray(catalog?.plugins) ? catalog.plugins : []) {
    if (typeof entry?.source !== "string") continue;
    const rel = entry.source.startsWith("./") || entry.source.startsWith("../") ? entry.source : path.join(pluginRoot, entry.source);
    const dir = path.resolve(market.dir, rel);
    // An entry whose source is the marketplace's own folder (anthropics/skills' `strict: false`
    // skill packs) is judged with the catalog, but installed and compared with --details.
    if (dir === market.dir) out.push({ label: String(entry.name ?? entry.source), dir, installOnly: true });
    if (path.relative(market.dir, dir).startsWith("..") || !fs.existsSync(dir) || !fs.statSync(dir).isDirectory() || dir === market.dir || seen.has(dir)) continue;
    seen.add(dir);
    out.push({ label: String(entry.name ?? entry.source), dir });
  }
  return out;
}

const firstErrors = (list) => list.slice(0, 4).map((e) => `${e.file ?? ""} ${e.path ?? ""}: ${e.message}`.trim());

async function claudeVerdict(pinned, home, dir) {
  const r = await run(process.execPath, [pinned.wrapper, "plugin", "validate", "--json", dir], { env: claudeEnv(home) });
  let report;
  try {
    report = JSON.parse(r.stdout);
  } catch {
    return { verdict: "fail", errors: [`no JSON (exit ${r.status}): ${(r.stderr + r.stdout).trim().slice(0, 300)}`] };
  }
  const errors = [report.manifest, ...(report.contents ?? [])].filter(Boolean).flatMap((part) => (part.errors ?? []).map((e) => ({ ...e, file: path.relative(dir, part.file ?? dir) })));
  return { verdict: r.status === 0 && errors.length === 0 ? "pass" : "fail", errors: firstErrors(errors) };
}

/**
 * Loopback only: both programs are pointed at a proxy and a registry on a closed loopback port,
 * so that nothing a catalog says can reach the network while installing from a local copy.
 */
const OFFLINE = { HTTP_PROXY: "http://127.0.0.1:9", HTTPS_PROXY: "http://127.0.0.1:9", NO_PROXY: "", npm_config_registry: "http://127.0.0.1:9/", npm_config_offline: "true" };
const claudeEnv = (home) => ({ ...cleanEnv(home), ...OFFLINE });
const ourEnv = (home) => ({ PATH: process.env.PATH ?? "", HOME: home, XCSH_HOME: path.join(home, ".xcsh"), NO_COLOR: "1", LANG: "C.UTF-8", ...OFFLINE });
const xcsh = (args, home, cwd) => run(process.execPath, [path.join(repo, "bin", "xcsh-tools.js"), ...args], { env: ourEnv(home), cwd });

async function ourVerdict(home, dir) {
  const r = await xcsh(["validate", "--static", "--json", dir], home, dir);
  let report;
  try {
    report = JSON.parse(r.stdout);
  } catch {
    return { verdict: "fail", errors: [`no JSON (exit ${r.status}): ${(r.stderr + r.stdout).trim().slice(0, 300)}`] };
  }
  // A target it cannot judge at all is one `error` document (exit 2), as Claude Code's "No manifest found".
  const errors = [...(report.errors ?? []), ...(report.error ? [report.error] : [])].map((e) => ({ ...e, message: `${e.code} ${e.message}`, file: path.relative(dir, e.file ?? dir) }));
  return { verdict: r.status === 0 && errors.length === 0 ? "pass" : "fail", errors: firstErrors(errors) };
}

const KINDS = ["skills", "agents", "hooks", "mcpServers", "lspServers"];
const firstLine = (r) => (r.stderr + r.stdout).trim().split("\n").slice(0, 2).join(" / ").slice(0, 300);

/**
 * Every in-repo plugin of `market` installed by both from the catalog folder, renamed
 * `real-catalog-<n>` (Claude Code refuses a name reserved for Anthropic added from a folder, and
 * some real names are not valid ids), then
 * `claude plugin details` against `show --json`. Returns one row per plugin.
 */
async function compareDetails(pinned, market, list) {
  const file = path.join(market.dir, ".claude-plugin", "marketplace.json");
  const catalog = JSON.parse(fs.readFileSync(file, "utf8"));
  const name = `real-catalog-${market.index}`;
  fs.writeFileSync(file, JSON.stringify({ ...catalog, name }, null, 2));
  const ccHome = fs.mkdtempSync(path.join(os.tmpdir(), "real-catalogs-cc-"));
  const ourHome = fs.mkdtempSync(path.join(os.tmpdir(), "real-catalogs-xcsh-"));
  const claude = (args) => run(process.execPath, [pinned.wrapper, "plugin", ...args], { env: claudeEnv(ccHome) });
  try {
    const [a, b] = await Promise.all([claude(["marketplace", "add", market.dir]), xcsh(["marketplace", "add", market.dir], ourHome, ourHome)]);
    if (a.status !== 0 || b.status !== 0) return [{ label: "(marketplace add)", problem: `Claude Code exit ${a.status}: ${firstLine(a)}; xcsh exit ${b.status}: ${firstLine(b)}` }];
    const rows = [];
    for (const t of list.filter((t) => t.label !== "(catalog)")) {
      const id = `${t.label}@${name}`;
      const [cc, ours] = await Promise.all([
        (async () => {
          const i = await claude(["install", id]);
          if (i.status !== 0) return { installed: false, why: firstLine(i) };
          const d = await claude(["details", id]);
          // Installed but not loadable (a broken PreToolUse hook): details does not find it.
          if (d.status !== 0 && /not found/.test(d.stdout + d.stderr)) return { installed: true, loads: false };
          try {
            return { installed: true, ...parseDetails(d.stdout) };
          } catch (e) {
            return { installed: true, unparsed: String(e.message).replace(/\s+/g, " ").slice(0, 300) };
          }
        })(),
        (async () => {
          const i = await xcsh(["install", id, "--yes"], ourHome, ourHome);
          if (i.status !== 0) return { installed: false, why: firstLine(i) };
          const s = await xcsh(["show", id, "--json"], ourHome, ourHome);
          try {
            const plugin = JSON.parse(s.stdout).plugins[0];
            return { installed: true, ...plugin.inventory, alwaysOn: plugin.cost.alwaysOn };
          } catch {
            return { installed: true, unparsed: `show --json exit ${s.status}: ${firstLine(s)}` };
          }
        })(),
      ]);
      const row = { label: t.label, cc, ours, problems: [] };
      if (cc.installed !== ours.installed) row.problems.push(`installed: Claude Code ${cc.installed ? "yes" : `no (${cc.why})`}, xcsh ${ours.installed ? "yes" : `no (${ours.why})`}`);
      else if (cc.installed && (cc.unparsed || ours.unparsed)) row.problems.push(`not read: ${cc.unparsed ?? ours.unparsed}`);
      else if (cc.loads === false) row.unloaded = true;
      else if (cc.installed) {
        for (const kind of KINDS) {
          const x = [...(cc[kind] ?? [])].sort().join(", ");
          const y = [...(ours[kind] ?? [])].sort().join(", ");
          if (x !== y) row.problems.push(`${kind}: Claude Code [${x}], xcsh [${y}]`);
        }
        row.deviation = cc.alwaysOn ? Math.abs(ours.alwaysOn - cc.alwaysOn) / cc.alwaysOn : ours.alwaysOn === 0 ? 0 : 1;
        if (Math.abs(ours.alwaysOn - cc.alwaysOn) > Math.max(cc.alwaysOn * 0.05, cc.alwaysOn < 20 ? 1 : 0)) row.problems.push(`always-on: Claude Code ${cc.alwaysOn}, xcsh ${ours.alwaysOn}`);
      }
      rows.push(row);
    }
    return rows;
  } finally {
    fs.rmSync(ccHome, { recursive: true, force: true });
    fs.rmSync(ourHome, { recursive: true, force: true });
  }
}

function printDetails(market, rows) {
  const both = rows.filter((r) => r.cc?.installed && r.ours?.installed && !r.cc.unparsed && !r.ours.unparsed && !r.unloaded);
  const unloaded = rows.filter((r) => r.unloaded).length;
  const names = both.filter((r) => !r.problems.some((p) => !p.startsWith("always-on")));
  const cost = both.filter((r) => !r.problems.some((p) => p.startsWith("always-on")));
  const devs = both.map((r) => r.deviation).sort((x, y) => x - y);
  const pct = (x) => `${(100 * (x ?? 0)).toFixed(2)}%`;
  const neither = rows.filter((r) => r.cc && !r.cc.installed && !r.ours.installed).length;
  console.log(`${market.name} details: ${both.length} installed by both and listed by details (${neither} installed by neither, ${unloaded} by both but not loaded by Claude Code); names and kinds agree ${names.length}/${both.length}; always-on within 5% ${cost.length}/${both.length} (median deviation ${pct(devs[Math.floor(devs.length / 2)])}, max ${pct(devs.at(-1))})`);
  if (unloaded) console.log(`  installed by both, not loaded by Claude Code (details: not found): ${rows.filter((r) => r.unloaded).map((r) => r.label).join(", ")}`);
  for (const r of rows.filter((r) => r.problem || r.problems.length)) {
    console.log(`  DETAILS ${r.label}:`);
    for (const p of r.problem ? [r.problem] : r.problems) console.log(`    ${p}`);
  }
  return { both: both.length, names: names.length, cost: cost.length, devs };
}

const pinned = installPinned();
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "real-catalogs-"));
const home = path.join(scratch, ".home");
fs.mkdirSync(home);
try {
  checkVersion(pinned, home);
  const jobs = Math.max(1, Number(values.jobs) || 2);
  const summary = [];
  const detailSummary = [];
  for (const market of marketplaces(scratch)) {
    const list = targets(market);
    const results = await pool(list.filter((t) => !t.installOnly), jobs, async (t) => ({ ...t, claude: await claudeVerdict(pinned, home, t.dir), ours: await ourVerdict(home, t.dir) }));
    const differ = results.filter((r) => r.claude.verdict !== r.ours.verdict);
    const line = `${market.name}: agree ${results.length - differ.length}/${results.length} (1 catalog, ${results.length - 1} in-repo plugins${list.some((t) => t.installOnly) ? `, ${list.filter((t) => t.installOnly).length} more sourced at the catalog's root, judged with it` : ""}; Claude Code fails ${results.filter((r) => r.claude.verdict === "fail").length})`;
    console.log(line);
    summary.push({ market: market.name, agree: results.length - differ.length, total: results.length });
    for (const d of differ) {
      console.log(`  DISAGREE ${d.label} (${path.relative(market.dir, d.dir) || "."}): Claude Code ${d.claude.verdict}, xcsh ${d.ours.verdict}`);
      for (const e of d.claude.errors) console.log(`    claude: ${e}`);
      for (const e of d.ours.errors) console.log(`    xcsh:   ${e}`);
    }
    if (values.details) detailSummary.push(printDetails(market, await compareDetails(pinned, market, list)));
  }
  const agree = summary.reduce((n, s) => n + s.agree, 0);
  const total = summary.reduce((n, s) => n + s.total, 0);
  console.log(`Total (Claude Code ${pinned.version}): ${agree}/${total} verdicts agree over ${summary.length} marketplaces.`);
  if (values.details) {
    const sum = (k) => detailSummary.reduce((n, s) => n + s[k], 0);
    const devs = detailSummary.flatMap((s) => s.devs).sort((x, y) => x - y);
    console.log(`Details: ${sum("names")}/${sum("both")} plugins agree on names and kinds, ${sum("cost")}/${sum("both")} within 5% always-on (median deviation ${(100 * (devs[Math.floor(devs.length / 2)] ?? 0)).toFixed(2)}%).`);
  }
  process.exitCode = agree === total ? 0 : 1;
} finally {
  fs.rmSync(scratch, { recursive: true, force: true });
}
