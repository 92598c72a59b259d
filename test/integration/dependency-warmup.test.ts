/**
 * Resolving a plugin also fetches its dependency tree into the command's packument cache
 * (src/plugins/dependency-warmup.ts), so that arborist, building its tree afterwards, asks the
 * registry for nothing more. Checked through a loopback proxy in front of the test Verdaccio that
 * records every packument request (test/helpers/registry-proxy.ts).
 */
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { useGlobalRegistry } from "../helpers/global-registry.js";
import type { RegistryHandle } from "../helpers/registry.js";
import { startRegistryProxy, type RegistryProxy } from "../helpers/registry-proxy.js";
import { makeTmpWorld, type TmpWorld } from "../helpers/tmp-home.js";
import { registryDependencySpecs } from "../../src/plugins/dependency-warmup.js";
import { loadArborist, npmOptions, type NpmClientOptions } from "../../src/plugins/npm-client.js";
import { resolveSpecs } from "../../src/plugins/resolve.js";
import { parseInstallSpec } from "../../src/plugins/spec.js";
import { toolSource } from "./plugins-fixtures.js";

let reg: RegistryHandle & { dispose(): Promise<void> };
let prefix: string;
const name = (what: string) => `${prefix}-${what}`;

/** A proxy to the registry that records the package names whose packuments were asked for. */
interface Spy extends RegistryProxy {
  packuments: string[];
}
async function startSpy(target: string): Promise<Spy> {
  const packuments: string[] = [];
  const proxy = await startRegistryProxy(target, (req) => {
    const pathname = decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname);
    if (!pathname.includes("/-/")) packuments.push(pathname.slice(1));
  });
  return { ...proxy, packuments };
}

const plugin = (pkgName: string, fields: Record<string, unknown>) => ({
  name: pkgName,
  version: "1.0.0",
  packageJson: { type: "module", xcsh: { tools: "./t.js" }, ...fields },
  files: { "t.js": toolSource(pkgName.replace(/[^a-z0-9]/g, "_")) },
});

beforeAll(async () => {
  reg = await useGlobalRegistry();
  prefix = `dw${Date.now().toString(36)}`;
  const lib = (what: string, dependencies: Record<string, string> = {}) => reg.publish({ name: name(what), version: "1.0.0", packageJson: { dependencies }, files: { "index.js": "module.exports = 1;\n" } });
  await lib("leaf");
  await lib("mid", { [name("leaf")]: "^1.0.0" });
  await lib("opt");
  await lib("peer");
  await lib("maybe-peer");
  await reg.publish(
    plugin(name("tree"), {
      dependencies: { [name("mid")]: "^1.0.0" },
      optionalDependencies: { [name("opt")]: "1.0.0" },
      peerDependencies: { [name("peer")]: "*", [name("maybe-peer")]: "^1.0.0" },
      peerDependenciesMeta: { [name("maybe-peer")]: { optional: true } },
    }),
  );
  await reg.publish(plugin(name("broken-dep"), { dependencies: { [name("missing")]: "^1.0.0" } }));
}, 120_000);
afterAll(async () => {
  await reg?.dispose();
});

let world: TmpWorld;
let spy: Spy;
beforeEach(async () => {
  world = await makeTmpWorld("xcsh-tools-warmup-", { trustProject: true });
  spy = await startSpy(reg.url);
});
afterEach(async () => {
  await spy.close();
  await world.cleanup();
});

function client(): NpmClientOptions {
  // A fresh npm cache: every packument the test expects is a real request to the spy.
  return { registry: { registry: spy.url, cache: path.join(world.root, "npm-cache") }, home: world.home, allowScripts: false, packumentCache: new Map() };
}

describe("dependency warm-up while resolving", () => {
  it("fetches the whole registry dependency tree, and arborist then fetches nothing", async () => {
    const options = client();
    const [resolved] = await resolveSpecs([parseInstallSpec(name("tree"), world.cwd)], options, world.cwd);
    expect(resolved?.name).toBe(name("tree"));
    // The optional peer is not installed by npm, so it is not fetched.
    expect([...spy.packuments].sort()).toEqual([name("leaf"), name("mid"), name("opt"), name("peer"), name("tree")].sort());

    const seen = spy.packuments.length;
    const Arborist = await loadArborist();
    const arb = new Arborist({ ...npmOptions(options), path: world.cwd });
    const tree = await arb.buildIdealTree({ add: [name("tree")] });
    expect([...tree.children.keys()].sort()).toEqual([name("leaf"), name("mid"), name("opt"), name("peer"), name("tree")].sort());
    expect(spy.packuments.slice(seen)).toEqual([]);
  });

  it("leaves a dependency that cannot be fetched to arborist: resolving still succeeds, after one attempt", async () => {
    const [resolved] = await resolveSpecs([parseInstallSpec(name("broken-dep"), world.cwd)], client(), world.cwd);
    expect(resolved?.name).toBe(name("broken-dep"));
    expect(spy.packuments.filter((p) => p === name("missing"))).toEqual([name("missing")]);
  });
});

describe("registryDependencySpecs", () => {
  it("follows versions, ranges and tags of dependencies, optional and required peers; skips git, file, alias, URL and optional peers", () => {
    const specs = registryDependencySpecs(
      {
        dependencies: { a: "^1.2.0", b: "latest", c: "github:acme/c", d: "file:../d", e: "npm:other@^1", f: "https://example.test/f.tgz", g: "1.0.0" },
        optionalDependencies: { h: "~2.0.0" },
        peerDependencies: { i: ">=3", j: "^4" },
        peerDependenciesMeta: { j: { optional: true } },
      },
      "/",
    );
    expect(specs.sort()).toEqual(["a@^1.2.0", "b@latest", "g@1.0.0", "h@~2.0.0", "i@>=3"]);
  });

  it("ignores fields that are not objects of strings", () => {
    expect(registryDependencySpecs({ dependencies: ["a"], optionalDependencies: null, peerDependencies: { k: 3 } }, "/")).toEqual([]);
  });
});
