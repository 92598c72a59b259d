import * as TypeBox from "@sinclair/typebox";
import { readFileSync, statSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  encodeModuleName,
  getModuleRegistry,
  MODULE_REGISTRY_SYMBOL,
  registerModules,
  renderShimSource,
  shimPath,
  writeShims,
} from "../../src/host/import/module-map.js";
import { resolveImportDirs } from "../../src/host/module-import.js";
import { makeTmpWorld, type TmpWorld } from "../helpers/tmp-home.js";

describe("module map", () => {
  let world: TmpWorld;
  beforeEach(async () => {
    world = await makeTmpWorld("xcsh-tools-test-", { trustProject: true });
  });
  afterEach(async () => {
    await world.cleanup();
  });

  it("keeps one process-global registry under a registered symbol", async () => {
    // The package entry hands its own API to the module map when it is imported (src/index.ts).
    const own = await import("../../src/index.js");
    await registerModules();
    const holder = globalThis as unknown as Record<symbol, unknown>;
    expect(holder[Symbol.for("xcsh-tools.modules")]).toBe(getModuleRegistry());
    expect(MODULE_REGISTRY_SYMBOL).toBe(Symbol.for("xcsh-tools.modules"));
    expect(getModuleRegistry().get("@sinclair/typebox")).toBe(TypeBox);
    expect(getModuleRegistry().get("xcsh-tools")).toBe(own);
  });

  it("keeps the first instance of a name for the life of the process", async () => {
    const first = { answer: 1 };
    const added = await registerModules({ "host-pkg-first-wins": first });
    expect(added).toContain("host-pkg-first-wins");
    expect(await registerModules({ "host-pkg-first-wins": { answer: 2 } })).not.toContain("host-pkg-first-wins");
    expect(getModuleRegistry().get("host-pkg-first-wins")).toBe(first);
  });

  it("encodes names into distinct safe file names", () => {
    expect(encodeModuleName("@sinclair/typebox")).toBe("_40sinclair_2ftypebox");
    expect(encodeModuleName("a_b")).not.toBe(encodeModuleName("a/b"));
    expect(encodeModuleName("xcsh-tools")).toBe("xcsh-tools");
  });

  it("renders a shim that re-exports named keys without shadowing the globals it uses", () => {
    const source = renderShimSource("pkg", { Type: 1, Symbol: 2, default: 3, "not-an-id": 4, delete: 5, globalThis: 6 });
    expect(source).toContain('get("pkg")');
    expect(source).toContain("export const { Type, Symbol } = __xcshToolsModule;");
    expect(source).not.toMatch(/not-an-id|delete|\{[^}]*globalThis/);
    expect(source).toContain("globalThis.Symbol.for");
  });

  it("writes shims atomically and only when their text changes", async () => {
    await registerModules({ "shim-write-test": { a: 1 } });
    const dir = path.join(world.root, "shims");
    writeShims(dir, ["shim-write-test"]);
    const file = shimPath(dir, "shim-write-test");
    const before = statSync(file).mtimeMs;
    await new Promise((r) => setTimeout(r, 20));
    writeShims(dir, ["shim-write-test"]);
    expect(statSync(file).mtimeMs).toBe(before);
    expect(readFileSync(file, "utf8")).toContain("export const { a }");
  });

  it("puts the jiti cache and shims under our folder of the xcsh root", () => {
    const dirs = resolveImportDirs({ home: world.home, xcshHome: world.xcshHome });
    expect(dirs.cacheDir).toBe(path.join(world.xcshHome, "plugins", ".xcsh-tools", "transpile"));
    expect(dirs.shimDir).toBe(path.join(world.xcshHome, "plugins", ".xcsh-tools", "shims"));
    expect(resolveImportDirs({ cacheDir: "/c" })).toEqual({ cacheDir: "/c", shimDir: path.join("/c", "shims") });
  });
});
