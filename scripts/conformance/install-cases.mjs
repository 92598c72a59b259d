/**
 * The install cases of the conformance corpus (test/fixtures/conformance/install/<id>/), made real
 * in a scratch folder the same way for the recorder (scripts/conformance/install.mjs, which runs
 * Claude Code) and for the test (test/integration/conformance-install.test.ts, which runs ours),
 * and what either installed, read back in one machine-independent shape. Plain JS: the recorder
 * runs without a TypeScript toolchain.
 *
 * A case folder holds `case.json` and `catalog/` (a local directory marketplace), and may hold
 * `repos/<name>/<n>-<tag>/`: the successive trees of a git repository `<name>`, committed in
 * order of `<n>` and tagged `<tag>` (the last one is also `main`). Each becomes a bare repository
 * served over loopback HTTP (a catalog may not name a folder of this disk: security). In the
 * catalog's JSON files, `{{repo:<name>}}` becomes the repository's URL and
 * `{{sha:<name>:<tag>}}` the commit's sha. `case.json`:
 *
 *   { "what": "...", "marketplace": "catalog", "gitCatalog": true?, "install": ["a@m", ...],
 *     "components": ["a@m"]? }
 *
 * `gitCatalog` commits the catalog folder too (in-repo plugins of a git folder record its commit).
 * Commits use a fixed identity and date, so their shas are the same on every machine; the
 * recorded file still names them by `<sha:name:tag>` so a git that hashes otherwise changes nothing.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

/** git with no configuration of the machine, a fixed identity and a fixed date: reproducible shas. */
function git(cwd, args, home) {
  return execFileSync("git", args, {
    cwd,
    encoding: "utf8",
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: home,
      GIT_CONFIG_GLOBAL: "/dev/null",
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_AUTHOR_NAME: "Conformance",
      GIT_AUTHOR_EMAIL: "conformance@example.com",
      GIT_COMMITTER_NAME: "Conformance",
      GIT_COMMITTER_EMAIL: "conformance@example.com",
      GIT_AUTHOR_DATE: "2026-01-01T00:00:00Z",
      GIT_COMMITTER_DATE: "2026-01-01T00:00:00Z",
    },
  }).trim();
}

function commitAll(dir, message, home) {
  git(dir, ["add", "-A"], home);
  git(dir, ["commit", "-q", "--allow-empty", "-m", message], home);
  return git(dir, ["rev-parse", "HEAD"], home);
}

/** The ids of the install cases under `dir`, sorted. */
export function installCaseIds(dir) {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && fs.existsSync(path.join(dir, d.name, "case.json")))
    .map((d) => d.name)
    .sort();
}

/** JSON files under `dir` (a catalog may name repositories in its marketplace.json or a plugin.json). */
function jsonFiles(dir) {
  return fs.readdirSync(dir, { recursive: true, withFileTypes: true }).filter((d) => d.isFile() && d.name.endsWith(".json")).map((d) => path.join(d.parentPath ?? d.path, d.name));
}

/**
 * Make case `caseDir` real under `work` (an empty folder): bare repositories under
 * `<gitRoot>/<id>/` (served at `<gitUrl>/<id>/`), the catalog at `<work>/catalog`. Returns the
 * case, the catalog folder and the shas by `<name>:<tag>`.
 */
export function materializeInstallCase(caseDir, work, gitRoot, gitUrl) {
  const id = path.basename(caseDir);
  const spec = JSON.parse(fs.readFileSync(path.join(caseDir, "case.json"), "utf8"));
  const shas = {};
  const urls = {};
  const reposDir = path.join(caseDir, "repos");
  for (const name of fs.existsSync(reposDir) ? fs.readdirSync(reposDir).sort() : []) {
    const tree = path.join(work, "trees", name);
    fs.mkdirSync(tree, { recursive: true });
    git(tree, ["init", "-q", "-b", "main"], work);
    const steps = fs.readdirSync(path.join(reposDir, name)).sort((a, b) => Number.parseInt(a, 10) - Number.parseInt(b, 10));
    for (const step of steps) {
      const tag = step.replace(/^\d+-/, "");
      for (const entry of fs.readdirSync(tree)) if (entry !== ".git") fs.rmSync(path.join(tree, entry), { recursive: true, force: true });
      fs.cpSync(path.join(reposDir, name, step), tree, { recursive: true });
      shas[`${name}:${tag}`] = commitAll(tree, tag, work);
      if (tag !== "main") git(tree, ["tag", tag], work);
    }
    const bare = path.join(gitRoot, id, `${name}.git`);
    fs.mkdirSync(path.dirname(bare), { recursive: true });
    git(work, ["clone", "-q", "--bare", tree, bare], work);
    urls[name] = `${gitUrl}/${id}/${name}.git`;
  }
  const catalog = path.join(work, spec.marketplace ?? "catalog");
  fs.cpSync(path.join(caseDir, spec.marketplace ?? "catalog"), catalog, { recursive: true });
  for (const file of jsonFiles(catalog)) {
    const text = fs.readFileSync(file, "utf8");
    const filled = text.replace(/\{\{repo:([\w-]+)\}\}/g, (_, n) => urls[n] ?? _).replace(/\{\{sha:([\w-]+:[\w.-]+)\}\}/g, (_, k) => shas[k] ?? _);
    if (filled !== text) fs.writeFileSync(file, filled);
  }
  if (spec.gitCatalog) {
    git(catalog, ["init", "-q", "-b", "main"], work);
    shas["catalog:main"] = commitAll(catalog, "catalog", work);
  }
  return { spec, catalog, shas };
}

/** A sha, or its first 12 characters (a version Claude Code makes of a commit), as `<sha:name:tag>` / `<sha12:name:tag>`. */
export function shaToken(value, shas) {
  if (typeof value !== "string") return value;
  for (const [key, sha] of Object.entries(shas)) {
    if (value === sha) return `<sha:${key}>`;
    if (value === sha.slice(0, 12)) return `<sha12:${key}>`;
  }
  return value;
}

/** The files of an installed plugin folder, relative and sorted (`.git` left out: neither keeps it). */
export function installedFiles(dir) {
  if (!dir || !fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => path.relative(dir, path.join(d.parentPath ?? d.path, d.name)).split(path.sep).join("/"))
    .filter((f) => !f.startsWith(".git/"))
    .sort();
}

/**
 * What an install left, in the recorded shape: per id, `{version, gitCommitSha?, scope, enabled,
 * auto?, files}` from a version-2 installed_plugins.json (either tool writes that shape) and the
 * enabled state (`enabledOf(id, entry)`: Claude Code keeps it in settings, xcsh in the entry).
 */
export function installedShape(registry, shas, enabledOf) {
  const out = {};
  for (const [id, entries] of Object.entries(registry?.plugins ?? {}).sort(([a], [b]) => a.localeCompare(b))) {
    const e = entries?.[0];
    if (!e) continue;
    out[id] = {
      version: shaToken(e.version, shas),
      ...(e.gitCommitSha ? { gitCommitSha: shaToken(e.gitCommitSha, shas) } : {}),
      scope: e.scope ?? "user",
      enabled: enabledOf(id, e),
      ...(e.auto ? { auto: true } : {}),
      files: installedFiles(e.installPath),
    };
  }
  return out;
}

/** Text without the machine's folders: the case's scratch folder becomes `<work>`, the home `<home>`, the git server `<git>`. */
export function scrubText(text, places) {
  let out = String(text ?? "");
  for (const [place, token] of places) if (place) out = out.split(place).join(token);
  return out.replace(/temp_[a-z]+_\d+_[a-z0-9]+/g, "<temp>").trim();
}
