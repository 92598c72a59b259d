/**
 * The pinned Claude Code, shared by the hand-run conformance scripts (conformance-record.mjs,
 * real-catalogs.mjs): where it is cached, how it is installed, and the environment it runs in.
 * One place, so every measurement runs the same program the same way.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");

/** Exits when run in CI: these scripts run a proprietary program; CI compares recorded files. */
export function refuseInCI(message) {
  if (process.env.CI === "true" || process.env.CI === "1") {
    console.error(message);
    process.exit(2);
  }
}

/** package.json "conformance.claudeCode", which must be an exact version. */
export function pinnedVersion() {
  const pkg = JSON.parse(fs.readFileSync(path.join(repo, "package.json"), "utf8"));
  const version = pkg.conformance?.claudeCode;
  if (typeof version !== "string" || !/^\d+\.\d+\.\d+$/.test(version)) {
    console.error('package.json "conformance.claudeCode" must pin an exact Claude Code version (e.g. "2.1.332").');
    process.exit(2);
  }
  return version;
}

/**
 * The pinned release, installed on first use from the npm registry into a cache of its own
 * ($XDG_CACHE_HOME or ~/.cache)/xcsh-tools-conformance/claude-code-<version>, never into the
 * repository's node_modules, with --ignore-scripts: its postinstall only copies the platform
 * binary, which cli-wrapper.cjs finds by itself. Returns `{version, installDir, wrapper}`.
 */
export function installPinned(version = pinnedVersion()) {
  const cacheRoot = path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), ".cache"), "xcsh-tools-conformance");
  const installDir = path.join(cacheRoot, `claude-code-${version}`);
  const wrapper = path.join(installDir, "node_modules", "@anthropic-ai", "claude-code", "cli-wrapper.cjs");
  if (!fs.existsSync(wrapper)) {
    fs.mkdirSync(installDir, { recursive: true });
    console.error(`Installing @anthropic-ai/claude-code@${version} into ${installDir} ...`);
    const npm = process.platform === "win32" ? "npm.cmd" : "npm";
    const r = spawnSync(npm, ["install", "--prefix", installDir, "--no-audit", "--no-fund", "--ignore-scripts", "--no-save", `@anthropic-ai/claude-code@${version}`], { stdio: "inherit" });
    if (r.status !== 0 || !fs.existsSync(wrapper)) {
      console.error(`npm install of @anthropic-ai/claude-code@${version} failed.`);
      process.exit(1);
    }
  }
  return { version, installDir, wrapper };
}

/** An environment that keeps Claude Code offline-minded and logged out: no keys, a fresh HOME. */
export function cleanEnv(home) {
  const env = { PATH: process.env.PATH ?? "", HOME: home, USERPROFILE: home, XDG_CONFIG_HOME: path.join(home, ".config"), LANG: "C.UTF-8" };
  Object.assign(env, { DISABLE_AUTOUPDATER: "1", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1", DISABLE_TELEMETRY: "1", NO_COLOR: "1" });
  return env;
}

/** Exits unless the cached program says it is the pinned version (a stale or damaged cache). */
export function checkVersion({ version, installDir, wrapper }, home) {
  const r = spawnSync(process.execPath, [wrapper, "--version"], { env: cleanEnv(home), encoding: "utf8", timeout: 120_000 });
  const reported = (r.stdout ?? "").trim().split(/\s+/)[0];
  if (reported !== version) {
    console.error(`The cached Claude Code reports version ${JSON.stringify(reported)}, not the pinned ${version}: remove ${installDir} and run again.`);
    process.exit(1);
  }
}
