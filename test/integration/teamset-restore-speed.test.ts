/**
 * What a team restore fetches before it installs (docs/design/team-sets.md (f) Bench): every
 * locked package is read by its integrity before anything is written (plugins/team.ts
 * `resolvePinned`), and a package that several plugins lock at the same bytes — a shared library —
 * is read once, not once per plugin; a mismatch of its bytes still names a lock field of a plugin
 * that locks it.
 *
 * Class: the same locked bytes asked for by several plugins. Hostile cases: three plugins sharing
 * one library, cold (every request counted at a proxy); the registry serving other bytes for that
 * shared library (EINTEGRITY naming /npm/<one of them>/dependencies/<lib@version>, nothing installed).
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import * as tar from "tar";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { useGlobalRegistry } from "../helpers/global-registry.js";
import { twoHomesBehindProxy, type ProxiedPair } from "../helpers/registry-proxy.js";
import type { RegistryHandle } from "../helpers/registry.js";
import { runCli } from "../helpers/run-cli.js";
import { lockedByAClonedByB } from "../helpers/team-project.js";
import { snapshotTree } from "../helpers/tree-snapshot.js";
import { makeTmpWorld, writeUserNpmrc, type TmpWorld } from "../helpers/tmp-home.js";
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


describe("team restore: bytes several plugins lock are read once", () => {
  let a: TmpWorld;
  let b: TmpWorld;
  let pair: ProxiedPair | undefined;
  let requests: string[];
  let swap: ((url: string) => Buffer | undefined) | undefined;
  let lib: string;
  let plugins: string[];

  beforeEach(async () => {
    const t = tag();
    lib = `@restorespeed/lib-${t}`;
    plugins = [1, 2, 3].map((i) => `@restorespeed/p${i}-${t}`);
    await reg.publish({ name: lib, version: "1.0.0", packageJson: { type: "module" }, files: { "index.js": "export default 1;\n" } });
    for (const name of plugins) {
      await reg.publish({ name, version: "1.0.0", packageJson: { type: "module", dependencies: { [lib]: "^1.0.0" }, xcsh: { tools: "./t.js" } }, files: { "t.js": toolSource(toolName(name)) } });
    }
    swap = undefined;
    pair = await twoHomesBehindProxy(reg.url, "xcsh-restorespeed", () => swap);
    ({ a, b, requests } = pair);
  });
  afterEach(async () => {
    await pair?.dispose();
  });

  /** A locks the three plugins with `install --yes`; B (cold npm cache) gets the declaration and the lock; B's root. */
  const lockedInA = () => lockedByAClonedByB(a, b, Object.fromEntries(plugins.map((name) => [name, { spec: "^1.0.0" }])));

  const libTarball = () => `/${lib}/-/${lib.slice(lib.indexOf("/") + 1)}-1.0.0.tgz`;

  it("three plugins sharing one library, cold: the library's tarball is requested once, and every plugin finds it", async () => {
    const root = await lockedInA();
    const restored = await xcsh(b, root, ["install", "--yes"]);
    expect(restored.code, restored.stderr).toBe(0);
    expect(requests.filter((r) => r === `GET ${libTarball()}`)).toHaveLength(1);
    expect(JSON.parse(await readFile(path.join(b.xcshHome, "plugins", "node_modules", lib, "package.json"), "utf8")).version).toBe("1.0.0");
  });

  it("the registry serves other bytes for the shared library: EINTEGRITY naming a plugin's /dependencies/<lib@1.0.0> field, nothing installed", async () => {
    const root = await lockedInA();
    const other = path.join(b.root, "other");
    await b.write(path.join(other, "package", "package.json"), { name: lib, version: "1.0.0", type: "module" });
    await b.write(path.join(other, "package", "index.js"), "export default 2;\n");
    const bytes = await new Promise<Buffer>((resolve, reject) => {
      const chunks: Buffer[] = [];
      tar.create({ gzip: true, cwd: other, portable: true }, ["package"]).on("data", (c: Buffer) => chunks.push(c)).on("end", () => resolve(Buffer.concat(chunks))).on("error", reject);
    });
    swap = (url) => (url === libTarball() ? bytes : undefined);
    const before = await snapshotTree(b.root, { exclude: [".npm", "other"] });
    const refused = await xcsh(b, root, ["install", "--yes"]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain("EINTEGRITY");
    const escaped = plugins.map((name) => `/npm/${name.replace("/", "~1")}/dependencies/${lib.replace("/", "~1")}@1.0.0`);
    expect(escaped.some((field) => refused.stderr.includes(field)), refused.stderr).toBe(true);
    expect(await snapshotTree(b.root, { exclude: [".npm", "other"] })).toEqual(before);
  });
});
