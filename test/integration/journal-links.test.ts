/**
 * The journal acts on a link's own path when it removes it or renames something over it: the link
 * inside the xcsh root may go, its target (outside the root) is never touched, and the folders
 * above the link are still confined.
 */
import { mkdir, readdir, readFile, readlink, rm, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { beginTransaction, recoverPending } from "../../src/core/journal.js";
import { makeTmpWorld, type TmpWorld } from "../helpers/tmp-home.js";

let w: TmpWorld;
let ours: string;
let nodeModules: string;
let outside: string;
beforeEach(async () => {
  w = await makeTmpWorld("xcsh-tools-journal-links-");
  const plugins = path.join(w.xcshHome, "plugins");
  ours = path.join(plugins, ".xcsh-tools");
  nodeModules = path.join(plugins, "node_modules");
  outside = path.join(w.root, "dev", "target");
  await mkdir(ours, { recursive: true });
  await mkdir(nodeModules, { recursive: true });
  await w.write(path.join(outside, "package.json"), { name: "target", version: "1.0.0" });
});
afterEach(async () => {
  await w.cleanup();
});

const exists = (p: string) => readlink(p).then(() => true, () => readdir(p).then(() => true, () => false));
const crashAt = (wanted: string) => (step: string) => {
  if (step === wanted) throw new Error(`killed at ${step}`);
};

describe("removing a link through the journal", () => {
  it("removes a link whose target is outside the root, and leaves the target intact", async () => {
    const link = path.join(nodeModules, "target");
    await symlink(path.relative(nodeModules, outside), link);
    const tx = await beginTransaction(ours);
    await tx.stageRemoval(link, path.dirname(nodeModules));
    await tx.commit();
    expect(await exists(link)).toBe(false);
    expect(JSON.parse(await readFile(path.join(outside, "package.json"), "utf8"))).toEqual({ name: "target", version: "1.0.0" });
  });

  it("removes a link to / without touching /", async () => {
    const link = path.join(nodeModules, "root");
    await symlink("/", link);
    const before = (await readdir("/")).sort();
    const tx = await beginTransaction(ours);
    await tx.stageRemoval(link, path.dirname(nodeModules));
    await tx.commit();
    expect(await exists(link)).toBe(false);
    expect((await readdir("/")).sort()).toEqual(before);
  });

  it("a link replaced by a real folder between plan and commit: the folder (inside the root) goes, the old target stays", async () => {
    const link = path.join(nodeModules, "target");
    await symlink(outside, link);
    const tx = await beginTransaction(ours);
    await tx.stageRemoval(link, path.dirname(nodeModules));
    await rm(link);
    await w.write(path.join(link, "package.json"), { name: "swapped" });
    await tx.commit();
    expect(await exists(link)).toBe(false);
    expect(await readdir(outside)).toEqual(["package.json"]);
  });

  it("a link below a folder that leads out of the root is still refused (only the last name is taken as it is)", async () => {
    const elsewhere = path.join(w.root, "elsewhere");
    await mkdir(elsewhere);
    await symlink(outside, path.join(elsewhere, "target"));
    await rm(nodeModules, { recursive: true });
    await symlink(elsewhere, nodeModules);
    const tx = await beginTransaction(ours);
    await expect(tx.stageRemoval(path.join(nodeModules, "target"), path.dirname(nodeModules))).rejects.toMatchObject({ code: "EPATH_OUTSIDE" });
    await tx.rollback();
    expect(await exists(path.join(elsewhere, "target"))).toBe(true);
  });

  it("a hand-edited journal removing a link below a folder that leads out of the root: recovery refuses it", async () => {
    const link = path.join(nodeModules, "target");
    await symlink(outside, link);
    const tx = await beginTransaction(ours);
    await tx.stageRemoval(link, path.dirname(nodeModules));
    // Make the transaction look committed (the commit record lists every entry: journal.ts writes
    // them only then) and its folder above the link lead outside.
    const intentFile = path.join(tx.dir, "intent.json");
    const intent = JSON.parse(await readFile(intentFile, "utf8"));
    await writeFile(intentFile, JSON.stringify({ ...intent, state: "committing", entries: [{ path: link, kind: "remove" }] }));
    await rm(link);
    await rm(nodeModules, { recursive: true });
    const elsewhere = path.join(w.root, "elsewhere");
    await mkdir(elsewhere);
    await symlink(outside, path.join(elsewhere, "target"));
    await symlink(elsewhere, nodeModules);
    await expect(recoverPending(ours)).rejects.toMatchObject({ code: "EPATH_OUTSIDE" });
    expect(await exists(path.join(elsewhere, "target"))).toBe(true);
    expect(await readdir(outside)).toEqual(["package.json"]);
  });
});

describe("a crash mid-commit, then recovery", () => {
  it("a removed link: recovery completes, the target is intact", async () => {
    const link = path.join(nodeModules, "target");
    await symlink(outside, link);
    const tx = await beginTransaction(ours, { onStep: crashAt("commit:swap:0:done") });
    await tx.stageRemoval(link, path.dirname(nodeModules));
    await writeFile(await tx.stage(path.join(nodeModules, ".package-lock.json")), "{}\n");
    await expect(tx.commit()).rejects.toThrow(/killed at/);
    const reports = await recoverPending(ours);
    expect(reports.map((r) => r.action)).toEqual(["completed"]);
    expect(await exists(link)).toBe(false);
    expect(await readFile(path.join(nodeModules, ".package-lock.json"), "utf8")).toBe("{}\n");
    expect(await readdir(outside)).toEqual(["package.json"]);
  });

  it("a new link to a folder outside the root, swapped in before the crash: recovery completes instead of refusing it", async () => {
    const link = path.join(nodeModules, "target");
    const tx = await beginTransaction(ours, { onStep: crashAt("commit:swap:0:done") });
    await symlink(outside, await tx.stage(link));
    await writeFile(await tx.stage(path.join(nodeModules, ".package-lock.json")), "{}\n");
    await expect(tx.commit()).rejects.toThrow(/killed at/);
    const reports = await recoverPending(ours);
    expect(reports.map((r) => r.action)).toEqual(["completed"]);
    expect(await readlink(link)).toBe(outside);
    expect(await readFile(path.join(nodeModules, ".package-lock.json"), "utf8")).toBe("{}\n");
    expect(await readdir(outside)).toEqual(["package.json"]);
  });

  it("a staged FILE over a link that leads outside is still refused (a file is written through the link)", async () => {
    const file = path.join(nodeModules, ".package-lock.json");
    await symlink(path.join(outside, "package.json"), file);
    const tx = await beginTransaction(ours);
    await expect(tx.stage(file)).rejects.toMatchObject({ code: "EPATH_OUTSIDE" });
    await tx.rollback();
    expect(JSON.parse(await readFile(path.join(outside, "package.json"), "utf8"))).toEqual({ name: "target", version: "1.0.0" });
  });
});
