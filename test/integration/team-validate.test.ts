/**
 * `xcsh-tools validate` of a team set's files (docs/design/team-sets.md (b)): `xcsh-team.json`,
 * `xcsh-team.lock.json` and `.xcsh/team.local.json` are recognised by name and checked by their
 * readers' validators, with the code `install` would stop with, the file and the JSON path; every
 * finding is listed; no network (a declared GitHub marketplace is not fetched).
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { buildDist } from "../helpers/build-dist.js";
import { runCli } from "../helpers/run-cli.js";
import { worldPerTest, type TmpWorld } from "../helpers/tmp-home.js";
import { declaration, lock, sha } from "../helpers/team-fixtures.js";

let w: TmpWorld;
worldPerTest((world) => (w = world), "xcsh-team-validate-");
beforeAll(async () => {
  await buildDist();
}, 180_000);

interface Issue {
  file: string;
  path: string;
  code: string;
  message: string;
  hint?: string;
}
interface Report {
  ok: boolean;
  target: { kind: string; path: string };
  errors: Issue[];
  warnings: Issue[];
}

async function put(rel: string, content: string | object): Promise<string> {
  const file = path.join(w.cwd, rel);
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, typeof content === "string" ? content : `${JSON.stringify(content, null, 2)}\n`);
  return file;
}

async function validate(file: string): Promise<{ code: number | null; report: Report }> {
  // An unreachable proxy: any network access would fail the run.
  const r = await runCli(["validate", file, "--json"], { cwd: w.cwd, home: w.home, env: { HTTPS_PROXY: "http://127.0.0.1:9", HTTP_PROXY: "http://127.0.0.1:9" }, timeoutMs: 60_000 });
  return { code: r.code, report: r.json<Report>() };
}

/** The error list as `code path` lines, each naming `file` and carrying a fix. */
function errorsOf(report: Report, file: string): string[] {
  for (const e of report.errors) {
    expect(e.file).toBe(file);
    expect(e.hint, `${e.code} says how to fix it`).toBeTruthy();
  }
  return report.errors.map((e) => `${e.code} ${e.path}`);
}

const npmOnly = { version: 1, plugins: { "@acme/x": { spec: "^1.0.0" } } };

describe("validate xcsh-team.json", () => {
  it("the design's declaration is valid (a GitHub marketplace is not fetched)", async () => {
    const file = await put("xcsh-team.json", declaration());
    const { code, report } = await validate(file);
    expect(report.errors).toEqual([]);
    expect(report.target).toEqual({ kind: "state-file", path: file, given: file });
    expect(code).toBe(0);
  });

  it.each([
    ["a plugin of an undeclared marketplace", { version: 1, plugins: { "lint@nope": {} } }, ["ETEAM_UNKNOWN_MARKETPLACE /plugins/lint@nope"]],
    ["an absolute directory path", { version: 1, marketplaces: { m: { source: { source: "directory", path: "/home/me/mkt" } } } }, ["ETEAM_MACHINE_PATH /marketplaces/m/source/path"]],
    ["a ~ directory path", { version: 1, marketplaces: { m: { source: { source: "directory", path: "~/mkt" } } } }, ["ETEAM_MACHINE_PATH /marketplaces/m/source/path"]],
    ["a file: npm spec", { version: 1, plugins: { "@acme/x": { spec: "file:../x" } } }, ["ETEAM_SPEC /plugins/@acme~1x/spec"]],
    ["an option-shaped git URL", { version: 1, marketplaces: { m: { source: { source: "git", url: "--upload-pack=touch /tmp/x" } } } }, ["EGIT_URL /marketplaces/m/source/url"]],
    ["plugins of the wrong type", { version: 1, plugins: [] }, ["ETEAM_DECLARATION_INVALID /plugins"]],
    ["a newer format", { version: 2 }, ["ETEAM_DECLARATION_INVALID /version"]],
    ["two problems at once: both listed", { version: 1, plugins: { "a@nope": {}, "@acme/y": { spec: "link:../y" } } }, ["ETEAM_UNKNOWN_MARKETPLACE /plugins/a@nope", "ETEAM_SPEC /plugins/@acme~1y/spec"]],
  ])("%s: exit 1, code and JSON path", async (_what, doc, expected) => {
    const file = await put("xcsh-team.json", doc);
    const { code, report } = await validate(file);
    expect(code).toBe(1);
    expect(errorsOf(report, file).sort()).toEqual([...expected].sort());
  });

  it("merge conflict markers: ETEAM_CONFLICT_MARKERS naming the line", async () => {
    const file = await put("xcsh-team.json", '{\n<<<<<<< HEAD\n  "version": 1\n=======\n  "version": 1\n>>>>>>> feat\n}\n');
    const { code, report } = await validate(file);
    expect(code).toBe(1);
    expect(errorsOf(report, file)).toEqual(["ETEAM_CONFLICT_MARKERS line 2"]);
  });

  it("text that is not JSON: ETEAM_DECLARATION_INVALID", async () => {
    const file = await put("xcsh-team.json", "{ version: 1 ");
    const { code, report } = await validate(file);
    expect(code).toBe(1);
    expect(report.errors.map((e) => e.code)).toEqual(["ETEAM_DECLARATION_INVALID"]);
  });

  it("a marketplace declared in .claude/settings.json beside it counts; a broken Claude file is reported on that file", async () => {
    const file = await put("xcsh-team.json", { version: 1, plugins: { "lint@claude-mkt": {} } });
    await put(".claude/settings.json", { extraKnownMarketplaces: { "claude-mkt": { source: { source: "github", repo: "acme/mkt" } } } });
    expect((await validate(file)).report.errors).toEqual([]);
    const claude = await put(".claude/settings.json", "{ nope");
    const { code, report } = await validate(file);
    expect(code).toBe(1);
    expect(report.errors.map((e) => `${e.code} ${e.file}`)).toEqual([`ETEAM_DECLARATION_INVALID ${claude}`, `ETEAM_UNKNOWN_MARKETPLACE ${file}`]);
  });
});

describe("validate xcsh-team.lock.json", () => {
  it("the design's lock is valid", async () => {
    const file = await put("xcsh-team.lock.json", lock());
    const { code, report } = await validate(file);
    expect(report.errors).toEqual([]);
    expect(code).toBe(0);
  });

  it.each([
    ["a newer lockfileVersion", () => ({ ...lock(), lockfileVersion: 2 }), ["ETEAM_LOCK_VERSION /lockfileVersion"]],
    ["a hand-edited hash", () => ({ ...lock(), marketplacePlugins: { "lint-helper@acme-tools": { ...lock().marketplacePlugins["lint-helper@acme-tools"]!, hash: "sha1:abc" } } }), ["ETEAM_LOCK_INVALID /marketplacePlugins/lint-helper@acme-tools/hash"]],
    ["a range where an exact version belongs", () => ({ ...lock(), npm: { "@acme/xcsh-search": { ...lock().npm["@acme/xcsh-search"]!, version: "^1.4.0" } } }), ["ETEAM_LOCK_INVALID /npm/@acme~1xcsh-search/version"]],
    ["an unknown key (closed schema)", () => ({ ...lock(), resolvedAt: "2026-01-01" }), ["ETEAM_LOCK_INVALID /resolvedAt"]],
    ["a relative plugin path that climbs out of its marketplace", () => ({ ...lock(), marketplacePlugins: { "lint-helper@acme-tools": { ...lock().marketplacePlugins["lint-helper@acme-tools"]!, from: { kind: "relative", path: "../../../home/me/.ssh" } } } }), ["EENTRY_ESCAPE /marketplacePlugins/lint-helper@acme-tools/from/path"]],
    ["a git from with an ext:: URL", () => ({ ...lock(), npm: { "@acme/xcsh-db": { ...lock().npm["@acme/xcsh-db"]!, from: { kind: "git", url: "ext::sh -c touch% /tmp/x", commit: sha("aa01") } } } }), ["EGIT_URL /npm/@acme~1xcsh-db/from/url"]],
  ])("%s: exit 1, code and JSON path", async (_what, doc, expected) => {
    const file = await put("xcsh-team.lock.json", doc());
    const { code, report } = await validate(file);
    expect(code).toBe(1);
    expect(errorsOf(report, file)).toEqual(expected);
  });

  it("conflict markers: ETEAM_CONFLICT_MARKERS", async () => {
    const file = await put("xcsh-team.lock.json", '{\n  "lockfileVersion": 1,\n<<<<<<< HEAD\n  "npm": {}\n=======\n  "npm": {"a": 1}\n>>>>>>> b\n}\n');
    expect(errorsOf((await validate(file)).report, file)).toEqual(["ETEAM_CONFLICT_MARKERS line 3"]);
  });
});

describe("validate .xcsh/team.local.json", () => {
  it("personal choices about declared plugins are valid", async () => {
    const file = await put(".xcsh/team.local.json", { version: 1, plugins: { "@acme/xcsh-search": { enabled: false }, "lint-helper@acme-tools": { features: [] } } });
    const { code, report } = await validate(file);
    expect(report.errors).toEqual([]);
    expect(code).toBe(0);
  });

  it.each([
    ["a key that is no plugin name", { version: 1, plugins: { "Not A Name": { enabled: false } } }, ["ETEAM_DECLARATION_INVALID /plugins/Not A Name"]],
    ["enabled of the wrong type", { version: 1, plugins: { "@acme/x": { enabled: "no" } } }, ["ETEAM_DECLARATION_INVALID /plugins/@acme~1x/enabled"]],
  ])("%s: exit 1, code and JSON path", async (_what, doc, expected) => {
    const file = await put(".xcsh/team.local.json", doc);
    const { code, report } = await validate(file);
    expect(code).toBe(1);
    expect(errorsOf(report, file)).toEqual(expected);
  });

  it("an npm-only declaration beside it does not change how the personal file is read", async () => {
    await put("xcsh-team.json", npmOnly);
    const file = await put(".xcsh/team.local.json", { version: 1, plugins: { "@acme/x": { enabled: false } } });
    expect((await validate(file)).code).toBe(0);
  });
});
