/**
 * `unlink` restores the dependency spec recorded before the link (installs.json
 * `linkedOver.dependency`), which is state read back from disk: it passes the same gate as the
 * specs of the plugins package.json (issue 41, class I.4). A tampered spec is a coded error,
 * nothing changes under the xcsh home, and no program runs (a canary the spec would create stays
 * absent).
 */
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { buildDist } from "../helpers/build-dist.js";
import { runCli } from "../helpers/run-cli.js";
import { snapshotTree } from "../helpers/tree-snapshot.js";
import { type TmpWorld, worldPerTest } from "../helpers/tmp-home.js";

const TOOL = 'export default (api) => ({ name: "linked_tool", label: "t", description: "d", parameters: api.typebox.Type.Object({}), async execute() { return { content: [] }; } });\n';

let w: TmpWorld;
worldPerTest((made) => (w = made), "xcsh-tools-unlink-restore-");
beforeAll(async () => {
  await buildDist();
}, 180_000);

const run = (args: string[]) => runCli(args, { cwd: w.cwd, home: w.home });

async function folder(version: string): Promise<string> {
  const dir = path.join(w.root, `src-linked-${version}`);
  await w.write(path.join(dir, "package.json"), { name: "linked", version, type: "module", xcsh: { tools: "./t.js" } });
  await w.write(path.join(dir, "t.js"), TOOL);
  return dir;
}

/** Install `linked` from a folder, link another folder over it, then write `spec` as what unlink restores. */
async function linkedOver(spec: (canary: string, recorded: string) => string): Promise<{ canary: string }> {
  await w.write(path.join(w.home, ".npmrc"), "registry=http://127.0.0.1:9/\n");
  expect((await run(["install", await folder("1.0.0")])).code).toBe(0);
  const linked = await run(["link", await folder("2.0.0")]);
  expect(linked.code, linked.stderr).toBe(0);
  const file = path.join(w.xcshHome, "plugins", ".xcsh-tools", "installs.json");
  const record = JSON.parse(await readFile(file, "utf8"));
  expect(record.plugins.linked.linkedOver.dependency).toMatch(/^file:\.xcsh-tools\/packed\//);
  const canary = path.join(w.root, "canary");
  record.plugins.linked.linkedOver.dependency = spec(canary, record.plugins.linked.linkedOver.dependency);
  await writeFile(file, JSON.stringify(record, null, 2));
  return { canary };
}

describe("unlink: a tampered restored spec", () => {
  it.each([
    { name: "an option-shaped ssh host", spec: (c: string) => `git+ssh://-oProxyCommand=touch\${IFS}${c}/x/repo.git`, code: "EGIT_URL" },
    { name: "an option-shaped git ref", spec: (c: string) => `git+https://example.invalid/r.git#--upload-pack=touch\${IFS}${c}`, code: "EGIT_REF" },
    { name: "a remote helper (ext::)", spec: (c: string) => `git+ext::sh -c touch\${IFS}${c}`, code: /^E(GIT_URL|SPEC)$/ },
    { name: "a local repository the user never typed", spec: () => "git+file:///tmp/some-repo", code: "EGIT_URL" },
    { name: "an option-shaped GitHub shorthand", spec: () => "github:-oProxyCommand/x", code: /^E(SOURCE_INVALID|GIT_URL)$/ },
    { name: "a file: path out of the plugins folder", spec: () => "file:../../../etc", code: "EPATH_OUTSIDE" },
    { name: "an absolute file: path", spec: () => "file:/etc", code: "EPATH_OUTSIDE" },
    { name: "a packed path climbing out", spec: () => "file:.xcsh-tools/packed/../../../../etc", code: "EPATH_OUTSIDE" },
  ])("$name: coded error naming the field, nothing changed, nothing run", async ({ spec, code }) => {
    const { canary } = await linkedOver(spec);
    const before = await snapshotTree(w.xcshHome);
    for (const args of [["unlink", "linked", "--json"], ["unlink", "linked", "--dry-run", "--json"]]) {
      const r = await run(args);
      expect(r.code, r.stderr).not.toBe(0);
      const error = r.json().error;
      expect(error.code).toMatch(code);
      expect(error.message).toContain("/plugins/linked/linkedOver/dependency");
    }
    expect(await snapshotTree(w.xcshHome)).toEqual(before);
    expect(existsSync(canary)).toBe(false);
  }, 60_000);

  it("the spec install recorded (file:.xcsh-tools/packed/…) passes and is restored", async () => {
    await linkedOver((_canary, recorded) => recorded);
    const r = await run(["unlink", "linked"]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.stringify((await run(["list", "--json"])).json())).toContain("1.0.0");
  }, 60_000);
});
