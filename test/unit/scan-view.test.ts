/**
 * boot/views.ts `scanView` spares the second scan of a view only when the previous view's inputs,
 * stat'ed before the scan, have the signatures the new fingerprints took after it (nothing the
 * answer depends on moved while the scan read it), and takes a stored hash only for an input whose
 * signature is unchanged. Each case below is a way that shortcut could trust what moved: a file
 * rewritten, a tool added to a folder, an input new to the view, no previous view at all, the
 * folder of a known input that is new to the view (stat'ed before the scan) moving while it runs.
 * Discovery is replaced by a stand-in that answers with one tool file and can change the disk
 * while it "scans".
 */
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { beforeEach, describe, expect, it, vi } from "vitest";
import type { BootView, ViewKey } from "../../src/boot/format.js";
import { type TmpWorld, worldPerTest } from "../helpers/tmp-home.js";

const scans = vi.hoisted(() => ({ calls: 0, during: undefined as undefined | ((call: number) => Promise<void>), files: [] as string[], ignored: [] as string[] }));

vi.mock("../../src/discovery/index.js", () => ({
  discoverToolPaths: async () => {
    scans.calls++;
    // The answer is what was on disk when the scan began; `during` changes the disk meanwhile.
    const files = [...scans.files];
    const ignored = [...scans.ignored];
    await scans.during?.(scans.calls);
    const source = { provider: "native", providerName: "xcsh", level: "user" };
    return { paths: files.map((file) => ({ path: file, source })), errors: [], metadata: [], ignored: ignored.map((file) => ({ path: file, source, reason: "not a tool" })) };
  },
}));

const { scanView } = await import("../../src/boot/views.js");
const { worldOf } = await import("../../src/boot/world.js");

let w: TmpWorld;
worldPerTest((made) => (w = made), "xcsh-tools-scan-view-");

function setUp() {
  const world = worldOf({ home: w.home, xcshHome: w.xcshHome, env: {} });
  const key: ViewKey = { home: w.home, cwd: w.cwd, configuredPaths: [], providers: ["native"], trusted: false };
  return { world, key };
}

async function tool(name: string, body = "export default () => ({});\n"): Promise<string> {
  const { world } = setUp();
  await mkdir(world.paths.userTools, { recursive: true });
  const file = path.join(world.paths.userTools, name);
  await writeFile(file, body);
  return file;
}

beforeEach(() => {
  scans.calls = 0;
  scans.during = undefined;
  scans.files = [];
  scans.ignored = [];
});

describe("scanView with the previous view", () => {
  it("nothing moved during the scan: one scan, consistent, the stored hashes kept", async () => {
    const { world, key } = setUp();
    scans.files = [await tool("a.ts")];
    const first = await scanView(world, key);
    expect(scans.calls).toBe(2);
    scans.calls = 0;
    const again = await scanView(world, key, first.view);
    expect(again).toMatchObject({ consistent: true });
    expect(scans.calls).toBe(1);
    expect(again.view.inputs).toEqual(first.view.inputs);
  });

  it("a tool file rewritten while the scan reads it: scanned again, and the new hash is taken, not the stored one", async () => {
    const { world, key } = setUp();
    const file = await tool("a.ts");
    scans.files = [file];
    const first = await scanView(world, key);
    scans.calls = 0;
    scans.during = async (call) => {
      if (call === 1) await writeFile(file, "export default () => ({ changed: true });\n");
    };
    const again = await scanView(world, key, first.view);
    expect(scans.calls).toBe(2);
    const input = (view: BootView) => view.inputs.find((i) => i.path === file)!;
    expect(input(again.view).sha).not.toBe(input(first.view).sha);
    expect(input(again.view).sig).not.toBe(input(first.view).sig);
    expect(await readFile(file, "utf8")).toContain("changed");
  });

  it("a tool added to a tools folder while the scan reads it (the answer changes): scanned again, not consistent", async () => {
    const { world, key } = setUp();
    scans.files = [await tool("a.ts")];
    const first = await scanView(world, key);
    scans.calls = 0;
    scans.during = async (call) => {
      if (call !== 1) return;
      const added = await tool("b.ts");
      // The second scan sees it; the first answer did not have it.
      scans.files = [...scans.files, added];
    };
    const again = await scanView(world, key, first.view);
    expect(scans.calls).toBe(2);
    expect(again.consistent).toBe(false);
  });

  it("an input the previous view did not have (a tool file new to a folder it read): scanned again", async () => {
    const { world, key } = setUp();
    scans.files = [await tool("a.ts")];
    const first = await scanView(world, key);
    scans.files = [...scans.files, await tool("b.ts")];
    scans.calls = 0;
    const again = await scanView(world, key, first.view);
    expect(scans.calls).toBe(2);
    expect(again.consistent).toBe(true);
  });

  it("no previous view: scanned twice, as before", async () => {
    const { world, key } = setUp();
    scans.files = [await tool("a.ts")];
    await scanView(world, key);
    expect(scans.calls).toBe(2);
  });

  // A plugin enabled, a feature turned on: the tool file was an input already (every entry a
  // manifest declares is), and the one new input is its folder, which the scan now stat's first.
  // Here the file is first an ignored path (an input, its folder not), then a tool.
  async function folderToolView() {
    const { world, key } = setUp();
    const folder = path.join(world.paths.userTools, "sub");
    await mkdir(folder, { recursive: true });
    const file = path.join(folder, "index.ts");
    await writeFile(file, "export default () => ({});\n");
    scans.ignored = [file];
    const first = await scanView(world, key);
    expect(first.view.inputs.some((input) => input.path === folder)).toBe(false);
    scans.ignored = [];
    scans.files = [file];
    scans.calls = 0;
    return { world, key, first, folder, file };
  }

  it("an input new to the view that is the folder of one it had (a plugin enabled): one scan, consistent", async () => {
    const { world, key, first, folder } = await folderToolView();
    const again = await scanView(world, key, first.view);
    expect(scans.calls).toBe(1);
    expect(again.consistent).toBe(true);
    expect(again.view.inputs.some((input) => input.path === folder)).toBe(true);
  });

  it("that folder changed while the scan read it (a file added): scanned again", async () => {
    const { world, key, first, folder } = await folderToolView();
    scans.during = async (call) => {
      if (call === 1) await writeFile(path.join(folder, "other.ts"), "export default () => ({});\n");
    };
    const again = await scanView(world, key, first.view);
    expect(scans.calls).toBe(2);
    expect(again.consistent).toBe(true);
  });

  it("that folder replaced while the scan read it (removed and made again): scanned again", async () => {
    const { world, key, first, folder, file } = await folderToolView();
    scans.during = async (call) => {
      if (call !== 1) return;
      await rm(folder, { recursive: true });
      await mkdir(folder);
      await writeFile(file, "export default () => ({ again: true });\n");
    };
    const again = await scanView(world, key, first.view);
    expect(scans.calls).toBe(2);
  });

  it("a new input in a folder the previous view never read: scanned again, as before", async () => {
    const { world, key } = setUp();
    scans.files = [await tool("a.ts")];
    const first = await scanView(world, key);
    const elsewhere = path.join(w.home, "elsewhere");
    await mkdir(elsewhere, { recursive: true });
    const file = path.join(elsewhere, "t.ts");
    await writeFile(file, "export default () => ({});\n");
    scans.files = [...scans.files, file];
    scans.calls = 0;
    await scanView(world, key, first.view);
    expect(scans.calls).toBe(2);
  });
});
