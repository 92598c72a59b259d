/**
 * `listInstalledComponents` answered from the boot index (boot-components.json): fresh answers
 * read no plugin folder and load neither YAML nor the component readers; an edited, added or
 * removed component file, a registry change, a missing or older index, a tampered view or a
 * change of trust makes the next answer a scan, equal to what a scan without index gives.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { listInstalledComponents } from "../../src/index.js";
import { installedComponentsIndexed } from "../../src/boot/components.js";
import { BOOT_INDEX_VERSION } from "../../src/boot/format.js";
import { xcshPaths } from "../../src/core/paths.js";
import { REPO, buildDist, modulesOfLoadedFiles } from "../helpers/build-dist.js";
import { installFullPlugin, writeFullPlugin } from "../helpers/component-fixtures.js";
import { hermeticEnv, runProcess } from "../helpers/run-cli.js";
import { type TmpWorld, worldPerTest } from "../helpers/tmp-home.js";

let w: TmpWorld;
worldPerTest((made) => (w = made), "xcsh-tools-components-index-", { trustProject: true });

const install = (scope: "user" | "project", name: string) => installFullPlugin(w, scope, name);
const userRegistry = () => path.join(w.xcshHome, "plugins", "installed_plugins.json");

/** A second user plugin `second@mkt` beside the installed ones; returns its root. */
function addSecondPlugin(): string {
  const root = path.join(w.xcshHome, "plugins", "cache", "plugins", "mkt___second___1.0.0");
  writeFullPlugin(root, "second");
  const doc = JSON.parse(readFileSync(userRegistry(), "utf8"));
  doc.plugins["second@mkt"] = [{ scope: "user", installPath: root, version: "1.0.0" }];
  writeFileSync(userRegistry(), JSON.stringify(doc));
  return root;
}

const list = (extra: object = {}) => listInstalledComponents({ cwd: w.cwd, home: w.home, xcshHome: w.xcshHome, env: {}, ...extra });
const indexFile = () => xcshPaths({ home: w.home, xcshHome: w.xcshHome }).bootComponents;
const skills = (answer: Awaited<ReturnType<typeof list>>) =>
  answer.plugins.flatMap((p) => p.components.filter((c) => c.kind === "skill").map((c) => `${c.name}: ${c.description ?? ""}`)).sort();

describe("listInstalledComponents from the boot index", () => {
  it("writes the inventory on the first call and answers the next from it, with the same answer", async () => {
    install("user", "kitchen-sink");
    const first = await list();
    expect(first.index).toMatchObject({ fresh: false, written: true });
    const doc = JSON.parse(await readFile(indexFile(), "utf8"));
    expect(doc.version).toBe(BOOT_INDEX_VERSION);
    expect(doc.views).toHaveLength(1);
    expect(doc.views[0].key).toEqual({ home: w.home, cwd: w.cwd, trusted: true });
    const second = await list();
    expect(second.index).toEqual({ fresh: true, reason: "fresh", written: false });
    expect(second.plugins).toEqual(first.plugins);
    // And the same as a scan without any index.
    rmSync(indexFile());
    expect((await list({ write: false })).plugins).toEqual(second.plugins);
  });

  it("is stale after a SKILL.md is edited, added or removed, and answers what is on disk", async () => {
    const root = install("user", "kitchen-sink");
    await list();
    expect((await list()).index.fresh).toBe(true);

    writeFileSync(path.join(root, "skills", "review", "SKILL.md"), "---\nname: review\ndescription: Review the diff, now with more words\n---\nbody\n");
    const edited = await list();
    expect(edited.index.fresh).toBe(false);
    expect(edited.index.reason).toContain(path.join(root, "skills", "review", "SKILL.md"));
    expect(skills(edited)).toContain("review: Review the diff, now with more words");
    expect((await list()).index.fresh).toBe(true);

    mkdirSync(path.join(root, "skills", "added"));
    writeFileSync(path.join(root, "skills", "added", "SKILL.md"), "---\ndescription: a new skill\n---\nbody\n");
    const added = await list();
    expect(added.index.fresh).toBe(false);
    expect(skills(added)).toContain("added: a new skill");

    rmSync(path.join(root, "agents", "security-reviewer.md"));
    const removed = await list();
    expect(removed.index.fresh).toBe(false);
    expect(removed.plugins[0]!.components.some((c) => c.kind === "agent")).toBe(false);
    // Rewriting a file with the same bytes keeps the inventory fresh (hashed, not only stat'ed).
    const skill = path.join(root, "skills", "explain", "SKILL.md");
    writeFileSync(skill, readFileSync(skill));
    expect((await list()).index.fresh).toBe(true);
  });

  it("is stale when a plugin is installed or a registry changes", async () => {
    install("user", "kitchen-sink");
    await list();
    addSecondPlugin();
    const after = await list();
    expect(after.index.fresh).toBe(false);
    expect(after.plugins.map((p) => p.id).sort()).toEqual(["kitchen-sink@mkt", "second@mkt"]);
  });

  it("rebuilds a missing, corrupt, older-version or tampered index, never reads it as is", async () => {
    install("user", "kitchen-sink");
    const good = await list();
    const text = await readFile(indexFile(), "utf8");
    rmSync(indexFile());
    expect((await list()).index).toMatchObject({ fresh: false, written: true });

    const older = JSON.parse(text);
    older.version = 3;
    older.views[0].plugins = [];
    await writeFile(indexFile(), JSON.stringify(older));
    const fromOlder = await list();
    expect(fromOlder.index.fresh).toBe(false);
    expect(fromOlder.index.reason).toMatch(/version 3/);
    expect(fromOlder.plugins).toEqual(good.plugins);

    await writeFile(indexFile(), "{not json");
    expect((await list()).index).toMatchObject({ fresh: false, written: true });

    // A hand-edited view naming a file outside its plugin (a host would read that file).
    const tampered = JSON.parse(text);
    tampered.views[0].plugins[0].components[1].file = "/etc/passwd";
    await writeFile(indexFile(), JSON.stringify(tampered));
    const fromTampered = await list();
    expect(fromTampered.index.fresh).toBe(false);
    expect(fromTampered.index.reason).toMatch(/outside the plugin/);
    expect(fromTampered.plugins).toEqual(good.plugins);
  });

  it("keeps a trusted project's view from an untrusted question: project installs only in a trusted project", async () => {
    install("project", "proj");
    const trusted = await list({ projectTrust: true });
    expect(trusted.plugins.map((p) => `${p.id}:${p.scope}`)).toEqual(["proj@mkt:project"]);
    expect((await list({ projectTrust: true })).index.fresh).toBe(true);
    const untrusted = await list({ projectTrust: false });
    expect(untrusted.index.fresh).toBe(false);
    expect(untrusted.plugins).toEqual([]);
    expect(untrusted.untrusted?.trustCommand).toMatch(/xcsh-tools trust/);
    const again = await list({ projectTrust: false });
    expect(again.index.fresh).toBe(true);
    expect(again.plugins).toEqual([]);
    // The untrusted view does not depend on the project's registry: it never read it.
    const doc = JSON.parse(await readFile(indexFile(), "utf8"));
    const view = doc.views.find((v: { key: { trusted: boolean } }) => !v.key.trusted);
    expect(view.inputs.map((i: { path: string }) => i.path)).not.toContain(path.join(w.cwd, ".xcsh", "plugins", "installed_plugins.json"));
    expect((await list({ projectTrust: true })).plugins.map((p) => p.id)).toEqual(["proj@mkt"]);
  });

  it("asked with skipRoot, checks only the wanted plugins' files and the state files", async () => {
    const skippedRoot = install("user", "kitchen-sink");
    const wantedRoot = addSecondPlugin();
    expect((await list()).plugins.map((p) => p.id).sort()).toEqual(["kitchen-sink@mkt", "second@mkt"]);
    const ask = () => installedComponentsIndexed({ roots: { home: w.home, xcshHome: w.xcshHome }, cwd: w.cwd, projectTrusted: true, skipRoot: (root) => root === skippedRoot });
    const fresh = await ask();
    expect(fresh.index.fresh).toBe(true);
    expect(fresh.plugins.map((p) => p.id)).toEqual(["second@mkt"]);

    // An edit in the skipped plugin does not concern this question...
    writeFileSync(path.join(skippedRoot, "skills", "review", "SKILL.md"), "---\nname: review\ndescription: edited\n---\nbody\n");
    expect((await ask()).index.fresh).toBe(true);
    expect((await list()).index.fresh).toBe(false);
    // ...one in a wanted plugin does, and so does a registry change.
    writeFileSync(path.join(wantedRoot, "skills", "review", "SKILL.md"), "---\nname: review\ndescription: edited too\n---\nbody\n");
    const edited = await ask();
    expect(edited.index.fresh).toBe(false);
    expect(edited.plugins.flatMap((p) => p.components.filter((c) => c.kind === "skill").map((c) => c.description))).toContain("edited too");
    await list();
    const doc = JSON.parse(readFileSync(userRegistry(), "utf8"));
    delete doc.plugins["second@mkt"];
    writeFileSync(userRegistry(), JSON.stringify(doc));
    const removed = await ask();
    expect(removed.index.fresh).toBe(false);
    expect(removed.plugins).toEqual([]);
  });

  it("with write: false, a rebuilt inventory is not written", async () => {
    install("user", "kitchen-sink");
    expect((await list({ write: false })).index).toMatchObject({ fresh: false, written: false });
    expect(() => readFileSync(indexFile())).toThrow();
  });
});

describe("listInstalledComponents from the boot index, in a host process", () => {
  beforeAll(async () => {
    await buildDist();
  }, 180_000);

  /**
   * Call the built library in a child whose resolve hook logs every file it loads, read back as
   * the modules those files hold (the package is a bundle: `/src/…` for ours, `/node_modules/…`
   * for a library's, `modulesOfLoadedFiles`).
   */
  async function hostCall(): Promise<{ answer: { fresh: boolean; ids: string[]; skills: number }; urls: string[] }> {
    const log = path.join(w.root, "resolved.log");
    await writeFile(log, "");
    const hooks = await w.write("hooks/log-hooks.mjs", `import { appendFileSync } from "node:fs";\nexport async function resolve(specifier, context, next) {\n  const result = await next(specifier, context);\n  appendFileSync(${JSON.stringify(log)}, result.url + "\\n");\n  return result;\n}\n`);
    const register = await w.write("hooks/register.mjs", `import { register } from "node:module";\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`);
    const script = await w.write(
      "host.mjs",
      `const { listInstalledComponents } = await import(${JSON.stringify(pathToFileURL(path.join(REPO, "dist", "index.js")).href)});
const r = await listInstalledComponents(${JSON.stringify({ cwd: w.cwd, home: w.home, xcshHome: w.xcshHome, env: {} })});
console.log(JSON.stringify({ fresh: r.index.fresh, ids: r.plugins.map((p) => p.id), skills: r.plugins.flatMap((p) => p.components).filter((c) => c.kind === "skill").length }));
`,
    );
    const r = await runProcess(process.execPath, ["--import", register, script], { cwd: w.cwd, env: hermeticEnv(w.home), timeoutMs: 60_000 });
    expect(r.code, r.stderr).toBe(0);
    return { answer: JSON.parse(r.stdout.trim().split("\n").pop()!), urls: modulesOfLoadedFiles((await readFile(log, "utf8")).split("\n").filter(Boolean)) };
  }

  // TypeBox is not among them: the package entry a host imports loads it for the loader's checks.
  const READERS = /\/node_modules\/yaml\/|\/src\/components\/(scan|frontmatter|schemas)\.ts$/;

  it("a fresh answer loads neither YAML nor the component readers nor the plugin's code; a scan does", { timeout: 120_000 }, async () => {
    install("user", "kitchen-sink");
    await list();
    const fresh = await hostCall();
    expect(fresh.answer).toEqual({ fresh: true, ids: ["kitchen-sink@mkt"], skills: 2 });
    expect(fresh.urls.some((url) => url.endsWith("/src/boot/components.ts"))).toBe(true);
    expect(fresh.urls.filter((url) => READERS.test(url))).toEqual([]);
    expect(fresh.urls.filter((url) => url.includes("/tools/greet.ts"))).toEqual([]);
    // Without the index the same call scans, and then it does load the readers: the check above can fail.
    rmSync(indexFile());
    const scanned = await hostCall();
    expect(scanned.answer).toEqual({ fresh: false, ids: ["kitchen-sink@mkt"], skills: 2 });
    expect(scanned.urls.some((url) => /\/node_modules\/yaml\//.test(url))).toBe(true);
  });
});
