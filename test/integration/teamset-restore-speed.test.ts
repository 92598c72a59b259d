/**
 * What a team restore imports (docs/design/team-sets.md (f) Bench: "no module-checking child on
 * restore (static checks only, content pinned)"): an npm plugin restored at a lock entry this run
 * did not resolve anew has its bytes pinned by integrity, module-checked when whoever locked it
 * installed it, so `install --yes` imports none of its tool modules — neither the install's
 * validation nor the boot index refresh after the commit. A plugin entering the lock in the same
 * run (a hand-edited declaration) is still imported and checked after consent, and a bad one
 * fails the whole restore with nothing installed.
 *
 * Class: which plugins a restore imports. Hostile cases: a canary tool module (it writes a file
 * when imported) at its locked integrity; a canary resolved anew beside it (must be imported);
 * a module that throws at import resolved anew beside a locked one (EVALIDATE, nothing written);
 * `update --scope project` moving the lock to a version whose module throws (the restore it runs
 * starts from a planned lock the resolver finds satisfied: the entry is still new to the
 * committed lock, so it is imported — EVALIDATE, the lock stays).
 */
import { access, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { useGlobalRegistry } from "../helpers/global-registry.js";
import type { RegistryHandle } from "../helpers/registry.js";
import { runCli } from "../helpers/run-cli.js";
import { snapshotTree } from "../helpers/tree-snapshot.js";
import { makeTmpWorld, writeTrustRecord, writeUserNpmrc, type TmpWorld } from "../helpers/tmp-home.js";
import { toolName, toolSource } from "./plugins-fixtures.js";

let reg: RegistryHandle & { dispose(): Promise<void> };
beforeAll(async () => {
  reg = await useGlobalRegistry();
});
afterAll(async () => {
  await reg.dispose();
});
let tags = 0;
const tag = () => `${Math.random().toString(36).slice(2, 7)}${(tags += 1)}`;

const xcsh = (w: TmpWorld, cwd: string, args: string[]) => runCli(args, { cwd, home: w.home, timeoutMs: 120_000 });
const exists = (file: string) => access(file).then(() => true, () => false);
const nodeModule = (w: TmpWorld, name: string) => path.join(w.xcshHome, "plugins", "node_modules", name, "package.json");

async function project(w: TmpWorld, declared: Record<string, unknown>): Promise<string> {
  const root = path.join(w.root, "project");
  await w.write(path.join(root, "xcsh-team.json"), { version: 1, plugins: declared });
  await w.write(path.join(root, ".xcsh", ".keep"), "");
  await writeTrustRecord(w.xcshHome, [root]);
  return root;
}

describe("team restore: plugins at their locked integrity are not imported, plugins resolved anew are", () => {
  let a: TmpWorld;
  let b: TmpWorld;
  beforeEach(async () => {
    a = await makeTmpWorld("xcsh-restorespeed-a-");
    b = await makeTmpWorld("xcsh-restorespeed-b-");
    await writeUserNpmrc(a.home, reg.url);
    await writeUserNpmrc(b.home, reg.url);
  });
  afterEach(async () => {
    await a.cleanup();
    await b.cleanup();
  });

  /** A plugin whose tool module appends a line to `canary` whenever it is imported. */
  async function publishCanary(name: string, canary: string): Promise<void> {
    const body = `import { appendFileSync } from "node:fs";\nappendFileSync(${JSON.stringify(canary)}, "imported\\n");`;
    await reg.publish({ name, version: "1.0.0", packageJson: { type: "module", xcsh: { tools: "./t.js" } }, files: { "t.js": toolSource(toolName(name), body) } });
  }

  /** A locks `declared` with `install --yes`; B gets the project's declaration and lock; B's root. */
  async function lockedInA(declared: Record<string, unknown>): Promise<string> {
    const rootA = await project(a, declared);
    const locked = await xcsh(a, rootA, ["install", "--yes"]);
    expect(locked.code, locked.stderr).toBe(0);
    const rootB = await project(b, declared);
    await writeFile(path.join(rootB, "xcsh-team.lock.json"), await readFile(path.join(rootA, "xcsh-team.lock.json"), "utf8"));
    return rootB;
  }

  it("a canary plugin at its locked integrity: `install --yes` installs it and imports none of its modules; a canary resolved anew in the same restore is imported (module-checked)", async () => {
    const locked = `@restorespeed/locked-${tag()}`;
    const fresh = `@restorespeed/fresh-${tag()}`;
    const lockedCanary = path.join(a.root, "locked-imported");
    const freshCanary = path.join(a.root, "fresh-imported");
    await publishCanary(locked, lockedCanary);
    await publishCanary(fresh, freshCanary);
    const root = await lockedInA({ [locked]: { spec: "^1.0.0" } });
    // The canary works: whoever locked it (resolved anew there) checked its module.
    expect(await exists(lockedCanary)).toBe(true);
    await rm(lockedCanary);
    // B's declaration gains a plugin by hand: the lock has no entry for it.
    await writeFile(path.join(root, "xcsh-team.json"), `${JSON.stringify({ version: 1, plugins: { [locked]: { spec: "^1.0.0" }, [fresh]: { spec: "^1.0.0" } } }, null, 2)}\n`);
    const restored = await xcsh(b, root, ["install", "--yes"]);
    expect(restored.code, restored.stderr).toBe(0);
    expect(JSON.parse(await readFile(nodeModule(b, locked), "utf8")).version).toBe("1.0.0");
    expect(JSON.parse(await readFile(nodeModule(b, fresh), "utf8")).version).toBe("1.0.0");
    expect(await exists(lockedCanary)).toBe(false);
    expect(await exists(freshCanary)).toBe(true);
    expect(Object.keys(JSON.parse(await readFile(path.join(root, "xcsh-team.lock.json"), "utf8")).npm).sort()).toEqual([fresh, locked].sort());
  });

  it("a plugin resolved anew whose tool module throws at import, beside a locked one: EVALIDATE naming it, nothing installed, no file changed", async () => {
    const locked = `@restorespeed/locked-${tag()}`;
    const bad = `@restorespeed/bad-${tag()}`;
    const lockedCanary = path.join(a.root, "locked-imported");
    await publishCanary(locked, lockedCanary);
    await reg.publish({ name: bad, version: "1.0.0", packageJson: { type: "module", xcsh: { tools: "./t.js" } }, files: { "t.js": `throw new Error("this module always fails at import");\n` } });
    const root = await lockedInA({ [locked]: { spec: "^1.0.0" } });
    await rm(lockedCanary);
    await writeFile(path.join(root, "xcsh-team.json"), `${JSON.stringify({ version: 1, plugins: { [locked]: { spec: "^1.0.0" }, [bad]: { spec: "^1.0.0" } } }, null, 2)}\n`);
    const before = await snapshotTree(b.root, { exclude: [".npm"] });
    const refused = await xcsh(b, root, ["install", "--yes"]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain("EVALIDATE");
    expect(refused.stderr).toContain(`${bad} failed validation, so it was not installed`);
    expect(refused.stderr).toContain("this module always fails at import");
    expect(await exists(nodeModule(b, bad))).toBe(false);
    expect(await exists(nodeModule(b, locked))).toBe(false);
    expect(await exists(lockedCanary)).toBe(false);
    expect(await snapshotTree(b.root, { exclude: [".npm"] })).toEqual(before);
  });

  it("`update --scope project` moving a plugin to a version whose tool module throws at import: EVALIDATE, the lock and the installed version stay (an entry new to the committed lock is imported, even from a planned lock)", async () => {
    const name = `@restorespeed/moved-${tag()}`;
    const canary = path.join(b.root, "moved-imported");
    await publishCanary(name, canary);
    const root = await project(b, { [name]: { spec: "^1.0.0" } });
    const installed = await xcsh(b, root, ["install", "--yes"]);
    expect(installed.code, installed.stderr).toBe(0);
    expect(await exists(canary)).toBe(true);
    await reg.publish({ name, version: "1.0.1", packageJson: { type: "module", xcsh: { tools: "./t.js" } }, files: { "t.js": `throw new Error("1.0.1 always fails at import");\n` } });
    const lockBefore = await readFile(path.join(root, "xcsh-team.lock.json"), "utf8");
    const updated = await xcsh(b, root, ["update", "--scope", "project", "--yes"]);
    expect(updated.code).not.toBe(0);
    expect(updated.stderr).toContain("EVALIDATE");
    expect(updated.stderr).toContain("1.0.1 always fails at import");
    expect(await readFile(path.join(root, "xcsh-team.lock.json"), "utf8")).toBe(lockBefore);
    expect(JSON.parse(await readFile(nodeModule(b, name), "utf8")).version).toBe("1.0.0");
  });
});
