/**
 * A failure in the middle of every marketplace mutation leaves the tree byte-identical: each
 * named step a successful run goes through (ours and the journal's, up to the commit record) is
 * made to throw in turn, and the whole temp world is compared with its snapshot. A failure after
 * the commit record is completed by the next command's recovery.
 */
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  addMarketplace,
  installFromMarketplace,
  listMarketplacePlugins,
  removeMarketplace,
  setMarketplacePluginEnabled,
  uninstallMarketplacePlugin,
  updateMarketplacePlugins,
  updateMarketplaces,
  type MarketplaceContext,
} from "../../src/marketplace/index.js";
import { buildDist } from "../helpers/build-dist.js";
import { makeGitRemote, type GitRemote } from "../helpers/git-remote.js";
import { catalog, catalogPath, marketplaceCtx, pluginFiles, toolModule } from "../helpers/marketplace-fixtures.js";
import { makeTmpWorld, type TmpWorld } from "../helpers/tmp-home.js";
import { snapshotTree } from "../helpers/tree-snapshot.js";

let w: TmpWorld;
let remote: GitRemote;

beforeAll(async () => {
  await buildDist();
}, 180_000);
beforeEach(async () => {
  w = await makeTmpWorld("xcsh-tools-test-", { trustProject: true });
  const ctx = marketplaceCtx(w);
  remote = await makeGitRemote(w.root, "mk", { [catalogPath()]: catalog("mk", [{ name: "hello", source: "./plugins/hello", version: "1.0.0" }]), ...pluginFiles("plugins/hello", "hello", ["hello_tool"]) }, ctx.env);
});
afterEach(async () => {
  await w.cleanup();
});

class Injected extends Error {}

/**
 * Record the steps of `op` on a throw-away run (`probe`), then for each step before the commit
 * record run `op` failing there and check the tree is exactly as before.
 */
async function everyStepRollsBack(op: (ctx: MarketplaceContext) => Promise<unknown>): Promise<string[]> {
  const steps: string[] = [];
  const before = await snapshotTree(w.root);
  // The probe fails at the last step before the commit record; the rollback's own steps come after it.
  const probe = marketplaceCtx(w, {
    onStep: (step) => {
      steps.push(step);
      if (step === "commit:synced") throw new Injected("probe");
    },
  });
  await op(probe).catch((e: unknown) => {
    if (!(e instanceof Injected)) throw e;
  });
  expect(await snapshotTree(w.root)).toEqual(before);
  const candidates = [...new Set(steps.slice(0, steps.indexOf("commit:synced") + 1))];
  expect(candidates).toContain("commit:synced");
  expect(candidates.length).toBeGreaterThan(4);
  for (const target of candidates) {
    const ctx = marketplaceCtx(w, {
      onStep: (step) => {
        if (step === target) throw new Injected(target);
      },
    });
    await expect(op(ctx), `failing at ${target}`).rejects.toBeInstanceOf(Injected);
    expect(await snapshotTree(w.root), `tree after failing at ${target}`).toEqual(before);
  }
  return candidates;
}

describe("rollback at every step", () => {
  it("marketplace add", async () => {
    // The lock and journal folder of ours exist once any command has taken the lock (they stay,
    // empty); everything else must be exactly as before, so start from a world that has them.
    await mkdir(path.join(w.xcshHome, "plugins/.xcsh-tools/journal"), { recursive: true });
    const steps = await everyStepRollsBack((ctx) => addMarketplace(ctx, remote.url));
    expect(steps).toEqual(expect.arrayContaining(["state:loaded", "marketplace:fetched", "marketplace:staged-catalog", "marketplace:staged-registry", "commit:synced"]));
  });

  it("marketplace update and remove", async () => {
    await addMarketplace(marketplaceCtx(w), remote.url);
    await remote.commit({ [catalogPath()]: catalog("mk", [{ name: "hello", source: "./plugins/hello", version: "2.0.0" }]) });
    // updateMarketplaces reports failures per marketplace: unwrap the injected one.
    await everyStepRollsBack(async (ctx) => {
      const report = await updateMarketplaces(ctx, "mk");
      const failed = report.results.find((r) => r.op === "FAILED");
      if (failed && "error" in failed) throw new Injected(failed.error.message);
      return report;
    });
    await everyStepRollsBack((ctx) => removeMarketplace(ctx, "mk"));
  });

  it("marketplace remove with an installed plugin: the marketplace and its plugin go together or not at all", async () => {
    await addMarketplace(marketplaceCtx(w), remote.url);
    await installFromMarketplace(marketplaceCtx(w), ["hello@mk"]);
    const steps = await everyStepRollsBack((ctx) => removeMarketplace(ctx, "mk"));
    expect(steps).toEqual(expect.arrayContaining(["marketplace:staged-removals", "marketplace:staged-registries", "marketplace:staged-registry"]));
  });

  it("install, upgrade, enable, uninstall and plugin update", async () => {
    const ctx0 = marketplaceCtx(w);
    await addMarketplace(ctx0, remote.url);
    const steps = await everyStepRollsBack((ctx) => installFromMarketplace(ctx, ["hello@mk"], { scope: "project" }));
    expect(steps).toEqual(expect.arrayContaining(["marketplace:prepared", "marketplace:staged-cache", "marketplace:staged-registries"]));
    await installFromMarketplace(ctx0, ["hello@mk"], { scope: "project" });
    await installFromMarketplace(ctx0, ["hello@mk"]);
    await everyStepRollsBack((ctx) => setMarketplacePluginEnabled(ctx, ["hello@mk"], false, { scope: "user" }));
    await everyStepRollsBack((ctx) => uninstallMarketplacePlugin(ctx, ["hello@mk"], { scope: "project" }));
    // An upgrade: a new cache folder is added, the old one removed, in both scopes.
    await remote.commit({ [catalogPath()]: catalog("mk", [{ name: "hello", source: "./plugins/hello", version: "1.1.0" }]), "plugins/hello/tools/hello_tool.mjs": toolModule("hello_tool", "new") });
    await updateMarketplaces(ctx0, "mk");
    const upgradeSteps = await everyStepRollsBack(async (ctx) => {
      const report = await updateMarketplacePlugins(ctx, undefined);
      if (report.failed.length > 0) throw new Injected(report.failed[0]!.error.message);
      return report;
    });
    expect(upgradeSteps).toEqual(expect.arrayContaining(["marketplace:staged-cache", "marketplace:staged-removals"]));
  });

  it("a crash after the commit record is completed by the next command", async () => {
    const ctx0 = marketplaceCtx(w);
    await addMarketplace(ctx0, remote.url);
    const crashing = marketplaceCtx(w, {
      onStep: (step) => {
        if (step.startsWith("commit:swap:") && step.endsWith(":done")) throw new Injected(step);
      },
    });
    await expect(installFromMarketplace(crashing, ["hello@mk"])).rejects.toMatchObject({ code: "EJOURNAL" });
    const rows = await listMarketplacePlugins(ctx0); // recovers first
    expect(rows).toMatchObject([{ id: "hello@mk", scope: "user", version: "1.0.0" }]);
    expect(rows[0]!.missing).toBeUndefined();
    expect(path.basename(rows[0]!.installPath)).toMatch(/^mk___hello___1\.0\.0-/);
  });
});
