/**
 * A stand-in module (the lazy boot's, boot/lazy-tools.ts) goes through the loader's factory,
 * checks and conflict rules without an import, and synchronously unless its factory returns a
 * promise (host/loader.ts `#instantiate`): a lazy boot has a thousand of them, and a promise chain
 * each was a tenth of its call. Hostile: whatever the factories do (return a promise, throw,
 * reject, hang, return nothing, a bad tool, a taken name), a load whose modules are all stand-ins,
 * or every other one, records exactly the tools and errors, in the same order, as the load that
 * imports every module.
 */
import path from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { CustomToolLoader } from "../../src/host/loader.js";
import type { StandIn } from "../../src/host/loader.js";
import type { ToolPathWithSource } from "../../src/core/contract.js";
import { type TmpWorld, worldPerTest } from "../helpers/tmp-home.js";

let w: TmpWorld;
worldPerTest((made) => (w = made), "xcsh-tools-stand-ins-");

const tool = (name: string) => `{ name: ${JSON.stringify(name)}, description: "d", parameters: { type: "object", properties: {} }, execute: async () => ({ content: [] }) }`;
const MODULES: Record<string, string> = {
  "sync.mjs": `export default () => (${tool("sync_a")});`,
  "async.mjs": `export default async () => { await new Promise((r) => setTimeout(r, 30)); return ${tool("async_b")}; };`,
  "throws.mjs": `export default () => { throw new Error("boom"); };`,
  "rejects.mjs": `export default async () => { throw new Error("late boom"); };`,
  "hangs.mjs": `export default () => new Promise(() => {});`,
  "nothing.mjs": `export default () => null;`,
  "bad-shape.mjs": `export default () => ({ name: "bad shape", description: "" });`,
  "taken.mjs": `export default () => (${tool("sync_a")});`,
  "many.mjs": `export default () => [${tool("many_c")}, ${tool("async_b")}, ${tool("many_d")}];`,
  "last.mjs": `export default () => (${tool("last_e")});`,
};

async function load(entries: ToolPathWithSource[], standIn?: StandIn) {
  const loader = new CustomToolLoader(undefined, w.cwd, ["builtin"], undefined, { home: w.home, xcshHome: w.xcshHome, factoryTimeoutMs: 300, importTimeoutMs: 5000 });
  await loader.load(entries, standIn);
  return { tools: loader.tools.map((t) => [t.tool.name, t.path, t.resolvedPath]), errors: loader.errors.map((e) => [e.code, e.path, e.error, e.toolName]) };
}

describe("stand-in modules load exactly as imported ones", () => {
  it("every outcome, in input order, whether all, some or none of the modules are stand-ins", async () => {
    const entries: ToolPathWithSource[] = [];
    const modules = new Map<string, Record<string, unknown>>();
    for (const [name, text] of Object.entries(MODULES)) {
      const file = await w.write(path.join(w.root, "tools", name), text);
      entries.push({ path: file });
      modules.set(file, (await import(pathToFileURL(file).href)) as Record<string, unknown>);
    }
    const imported = await load(entries);
    expect(imported.tools.map((t) => t[0])).toEqual(["sync_a", "async_b", "many_c", "many_d", "last_e"]);
    expect(imported.errors.map((e) => e[0])).toEqual(["EFACTORY_THROW", "EFACTORY_THROW", "EFACTORY_TIMEOUT", "EFACTORY_RESULT", "ETOOL_SHAPE", "ECONFLICT", "ECONFLICT"]);
    const all: StandIn = (_entry, file) => modules.get(file);
    const everyOther: StandIn = (entry, file) => (entries.indexOf(entry) % 2 === 0 ? modules.get(file) : undefined);
    const asPromises: StandIn = (_entry, file) => Promise.resolve(modules.get(file));
    for (const standIn of [all, everyOther, asPromises]) expect(await load(entries, standIn)).toEqual(imported);
  });
});
