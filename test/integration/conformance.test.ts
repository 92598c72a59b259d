/**
 * Conformance with Claude Code (issue 45): for every fixture of test/fixtures/conformance/, our
 * `validate` gives the verdict the pinned Claude Code gave, as recorded by
 * `npm run conformance:record` in verdicts.json (Claude Code never runs here): pass ↔ no error,
 * fail ↔ at least one error, and every field a recorded error points at is named by one of our
 * errors. Where we differ on purpose, EXCEPTIONS says why (docs/conformance.md lists the same):
 * the test then checks that we really do differ in the documented way, so a stale exception fails.
 */
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { renderValidateReport } from "../../src/cli/commands/validate.js";
import { validatePath, type ValidateReport } from "../../src/validate/index.js";
import { REPO } from "../helpers/build-dist.js";
import { makeTmpWorld, type TmpWorld } from "../helpers/tmp-home.js";

const FIXTURES = path.join(REPO, "test", "fixtures", "conformance");
interface Finding {
  file: string;
  path: string;
  message: string;
}
interface Recorded {
  verdict: "pass" | "fail";
  exit: number;
  errors: Finding[];
  warnings: Finding[];
}
const VERDICTS = JSON.parse(readFileSync(path.join(FIXTURES, "verdicts.json"), "utf8")) as { claudeCode: string; fixtures: Record<string, Recorded> };
const IDS = readdirSync(FIXTURES, { withFileTypes: true })
  // Fixtures carry a case.json; install/ and inventory/ are the install and inventory corpora.
  .filter((d) => d.isDirectory() && d.name !== "install" && existsSync(path.join(FIXTURES, d.name, "case.json")))
  .map((d) => d.name)
  .sort();

/**
 * Where we differ from Claude Code on purpose: `ours` is our verdict, `reason` why (the same
 * words as docs/conformance.md). Each is asserted, so an exception that no longer holds fails.
 */
const EXCEPTIONS: Record<string, { ours: "pass" | "fail"; reason: string }> = {};

/** A recorded field as words: `plugins[0].source`, `plugins.0.source` and `/plugins/0/source` alike. */
function words(field: string): string[] {
  return field
    .replace(/\[(\d+)\]/g, ".$1")
    .split(/[./\s→]+/)
    .filter((w) => w !== "" && !/^\d+$/.test(w));
}
/**
 * Claude Code's warnings that are advice on metadata, not on the format, which `validate` does
 * not give (docs/conformance.md): a missing description, version or author, and what Claude
 * Desktop's or Claude.ai's marketplace sync accepts. Every other warning of Claude Code must be
 * said by ours too (as a warning, or as an error where we are stricter on purpose).
 */
const ADVICE = [/^No marketplace description provided/, /^No description provided/, /^No version specified/, /^No author information provided/, /not accepted by Claude Desktop/];

/** Our warnings that say one of Claude Code's: each must have its counterpart in the recorded ones (no false alarm). */
const MIRRORED = new Set(["EHOOK_UNQUOTED_ROOT", "EVERSION_OVERRIDDEN", "EPLUGIN_RESERVED", "EUNKNOWN_KEY"]);

/** Fields that mean the file as a whole (Claude Code's `json`, `root`, `frontmatter`). */
const WHOLE_FILE = new Set(["json", "root", "frontmatter", "directory"]);

/** Whether one of `ours` names the field a recorded finding points at. */
function namedBy(finding: Finding, ours: ValidateReport["errors"], base: string): boolean {
  const field = words(finding.path);
  // "plugins[N] plugin.json → F": F of the plugin.json of entry N, which we may report at the entry.
  const entry = /^plugins\[(\d+)\] plugin\.json/.exec(finding.path)?.[1];
  if (field.length === 0 || WHOLE_FILE.has(field.at(-1)!)) return ours.some((e) => path.relative(base, e.file) === finding.file);
  return ours.some((e) => words(e.path).includes(field.at(-1)!) || (entry !== undefined && e.path.startsWith(`/plugins/${entry}/`)));
}

let world: TmpWorld;
let work: string;
beforeAll(async () => {
  world = await makeTmpWorld("xcsh-tools-conformance-", { trustProject: true });
  work = path.join(world.root, "fixtures");
});
afterAll(async () => world?.cleanup());

/** Our verdict on a copy of the fixture without its case.json (Claude Code was given the same). */
async function ours(id: string): Promise<ValidateReport> {
  const target = path.join(work, id);
  cpSync(path.join(FIXTURES, id), target, { recursive: true });
  rmSync(path.join(target, "case.json"));
  return validatePath(target, { cwd: work, home: world.home, xcshHome: world.xcshHome, staticOnly: true });
}

function show(report: ValidateReport, base: string): string {
  const line = (e: ValidateReport["errors"][number]) => `${e.code} ${path.relative(base, e.file)} ${e.path}: ${e.message}`;
  return [...report.errors.map((e) => `E ${line(e)}`), ...report.warnings.map((e) => `W ${line(e)}`)].join("\n");
}

describe(`conformance with Claude Code ${VERDICTS.claudeCode}`, () => {
  it("every fixture has a recorded verdict and a case.json, and every verdict a fixture", () => {
    expect(Object.keys(VERDICTS.fixtures).sort()).toEqual(IDS);
    for (const id of IDS) {
      const c = JSON.parse(readFileSync(path.join(FIXTURES, id, "case.json"), "utf8")) as { what?: unknown; kind?: unknown };
      expect(typeof c.what, id).toBe("string");
      expect(["marketplace", "plugin"], id).toContain(c.kind);
    }
  });

  it.each(IDS)("%s", async (id) => {
    const recorded = VERDICTS.fixtures[id]!;
    const report = await ours(id);
    const base = path.join(work, id);
    const verdict = report.errors.length === 0 ? "pass" : "fail";
    const exception = EXCEPTIONS[id];
    if (exception) {
      expect(recorded.verdict, `${id}: the exception no longer differs from Claude Code`).not.toBe(exception.ours);
      expect(verdict, `${id}: ${exception.reason}\n${show(report, base)}`).toBe(exception.ours);
      return;
    }
    expect(verdict, `${id}: Claude Code says ${recorded.verdict} (${JSON.stringify(recorded.errors)}), we say:\n${show(report, base)}`).toBe(recorded.verdict);
    for (const error of recorded.errors) {
      expect(namedBy(error, report.errors, base), `${id}: Claude Code's error on ${error.file} "${error.path}" (${error.message}) is not named by ours:\n${show(report, base)}`).toBe(true);
    }
    for (const mine of report.warnings.filter((w) => MIRRORED.has(w.code))) {
      const counterpart = [...recorded.warnings, ...recorded.errors].some((f) => f.file === path.relative(base, mine.file) && namedBy(f, [mine], base));
      expect(counterpart, `${id}: our ${mine.code} ${mine.path} has no counterpart in Claude Code's findings ${JSON.stringify(recorded.warnings)}`).toBe(true);
    }
    for (const warning of recorded.warnings.filter((w) => !ADVICE.some((re) => re.test(w.message)))) {
      expect(namedBy(warning, [...report.warnings, ...report.errors], base), `${id}: Claude Code's warning on ${warning.file} "${warning.path}" (${warning.message}) is not said by ours:\n${show(report, base)}`).toBe(true);
    }
  });
});

describe("validate speaks the user's way (issue 45 point 4)", () => {
  /** Fixtures with findings on files below the target, in messages and in hints. */
  const NOISY = ["marketplace-source-missing-folder", "skill-frontmatter-unclosed", "plugin-hooks-path-is-folder", "marketplace-plugin-broken-manifest", "plugin-skills-path-is-file"];

  it.each(NOISY)("%s: every path is shown as typed, from two folders up and through a symlink, none absolute", async (id) => {
    const place = path.join(world.root, "places", id);
    const deep = path.join(place, "a", "b");
    mkdirSync(deep, { recursive: true });
    cpSync(path.join(FIXTURES, id), path.join(place, "catalog"), { recursive: true });
    rmSync(path.join(place, "catalog", "case.json"));
    symlinkSync(path.join(place, "catalog"), path.join(place, "link"));
    for (const typed of ["../../catalog", "../../link/", path.join(place, "catalog")]) {
      const report = await validatePath(typed, { cwd: deep, home: world.home, xcshHome: world.xcshHome, staticOnly: true });
      expect(report.target.given).toBe(typed);
      const lines = renderValidateReport(report, { color: false }, deep);
      const text = lines.join("\n");
      expect(report.errors.length + report.warnings.length, text).toBeGreaterThan(0);
      const shown = typed.replace(/\/+$/, "");
      // File headings and the summary line (the Components/Tools headings name no path).
      for (const line of lines.filter((l) => l !== "" && !l.startsWith(" ") && !/^(Components|Tools)\b/.test(l))) expect(line, text).toContain(shown);
      if (!path.isAbsolute(typed)) expect(text).not.toContain(world.root);
      expect(text).not.toMatch(/(^|[\s"(])\.\.\/\.\.\/\.\.(\/|\s|$)/m);
    }
  });

  it("a missing target is named as typed", async () => {
    await expect(validatePath("../nowhere/catalog", { cwd: world.cwd, staticOnly: true })).rejects.toMatchObject({ code: "ETARGET_NOT_FOUND", message: "Nothing to validate at ../nowhere/catalog" });
  });

  it.each(IDS)("%s: each of our findings carries its fix", async (id) => {
    const report = await ours(id);
    for (const issue of [...report.errors, ...report.warnings]) expect(issue.hint, `${id}: ${issue.code} ${issue.path}: ${issue.message}`).toMatch(/\S/);
  });
});
