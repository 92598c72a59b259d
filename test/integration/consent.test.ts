/**
 * Consent for what a marketplace plugin runs: install and update show new or changed hooks and
 * servers before anything is committed, ask through `approveExecutables`, and write nothing when
 * refused; the CLI refuses without a terminal or --yes (EUNCONFIRMED) and accepts with --yes.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { XcshToolsError } from "../../src/core/errors.js";
import { xcshPaths } from "../../src/core/paths.js";
import { addMarketplace, installFromMarketplace, updateMarketplacePlugins } from "../../src/marketplace/index.js";
import type { ExecutableRequest } from "../../src/marketplace/context.js";
import { needsConsent } from "../../src/components/consent.js";
import { buildDist } from "../helpers/build-dist.js";
import { catalog, catalogPath, marketplaceCtx } from "../helpers/marketplace-fixtures.js";
import { runCli } from "../helpers/run-cli.js";
import { type TmpWorld, worldPerTest } from "../helpers/tmp-home.js";

const R = "$" + "{CLAUDE_PLUGIN_ROOT}";

let w: TmpWorld;
worldPerTest((made) => (w = made), "xcsh-tools-consent-", { trustProject: true });

async function market(version: string, hookCommand: string): Promise<string> {
  const root = path.join(w.root, "market-acme");
  await w.write(path.join(root, catalogPath()), catalog("acme", [{ name: "guard", source: "./plugins/guard", version }]));
  await w.write(path.join(root, "plugins/guard/.claude-plugin/plugin.json"), { name: "guard", version });
  await w.write(path.join(root, "plugins/guard/hooks/hooks.json"), { hooks: { PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: hookCommand }] }] } });
  await w.write(path.join(root, "plugins/guard/scripts/check.py"), "print('ok')\n");
  await w.write(path.join(root, "plugins/guard/scripts/check2.py"), "print('ok')\n");
  await w.write(path.join(root, "plugins/guard/skills/s/SKILL.md"), "---\ndescription: s\n---\n");
  return root;
}

describe("approveExecutables (engine)", () => {
  it("is asked on install with the commands as they will run; a refusal writes nothing", async () => {
    const asked: ExecutableRequest[] = [];
    const refuse = marketplaceCtx(w, {
      approveExecutables: async (r) => {
        asked.push(r);
        throw new XcshToolsError("EUNCONFIRMED", "no");
      },
    });
    await addMarketplace(refuse, await market("1.0.0", `python3 ${R}/scripts/check.py`));
    await expect(installFromMarketplace(refuse, ["guard@acme"])).rejects.toMatchObject({ code: "EUNCONFIRMED" });
    expect(asked).toHaveLength(1);
    expect(asked[0]!.update).toBe(false);
    const cacheDir = asked[0]!.changes.added[0]!.runs.replace(/^python3 /, "").replace(/\/scripts\/check\.py$/, "");
    expect(cacheDir.startsWith(xcshPaths({ home: w.home, xcshHome: w.xcshHome }).pluginCache)).toBe(true);
    expect(asked[0]!.changes.added.map((e) => e.key)).toEqual(["hook PreToolUse [Bash]"]);
    expect(existsSync(xcshPaths({ home: w.home, xcshHome: w.xcshHome }).installedPlugins)).toBe(false);
    expect(existsSync(cacheDir)).toBe(false);
  });

  it("an update is asked only about what changed since the installed version", async () => {
    const asked: ExecutableRequest[] = [];
    const ctx = marketplaceCtx(w, { approveExecutables: async (r) => void asked.push(r) });
    const root = await market("1.0.0", `python3 ${R}/scripts/check.py`);
    await addMarketplace(ctx, root);
    await installFromMarketplace(ctx, ["guard@acme"]);
    await market("1.1.0", `python3 ${R}/scripts/check2.py`);
    const { updateMarketplaces } = await import("../../src/marketplace/index.js");
    await updateMarketplaces(ctx, "acme");
    const report = await updateMarketplacePlugins(ctx, ["guard@acme"]);
    expect(report.failed).toEqual([]);
    expect(asked).toHaveLength(2);
    expect(asked[1]!.update).toBe(true);
    expect(asked[1]!.changes.added).toEqual([]);
    expect(asked[1]!.changes.changed).toHaveLength(1);
    expect(asked[1]!.changes.changed[0]!.before.runs).toMatch(/check\.py$/);
    expect(asked[1]!.changes.changed[0]!.after.runs).toMatch(/check2\.py$/);
  });

  it("an update that keeps the same hooks is not asked, though its folder (and version) changed", async () => {
    const asked: ExecutableRequest[] = [];
    const ctx = marketplaceCtx(w, { approveExecutables: async (r) => void asked.push(r) });
    const root = await market("1.0.0", `python3 ${R}/scripts/check.py`);
    await addMarketplace(ctx, root);
    await installFromMarketplace(ctx, ["guard@acme"]);
    await market("1.1.0", `python3 ${R}/scripts/check.py`);
    const { updateMarketplaces } = await import("../../src/marketplace/index.js");
    await updateMarketplaces(ctx, "acme");
    const report = await updateMarketplacePlugins(ctx, ["guard@acme"]);
    expect(report.failed).toEqual([]);
    expect(report.items.map((i) => i.op)).toContain("CHANGE");
    expect(asked).toHaveLength(1);
  });

  it("an update that only removes a hook shows the removal and needs no consent", async () => {
    const asked: ExecutableRequest[] = [];
    const ctx = marketplaceCtx(w, { approveExecutables: async (r) => void asked.push(r) });
    const root = await market("1.0.0", `python3 ${R}/scripts/check.py`);
    await addMarketplace(ctx, root);
    await installFromMarketplace(ctx, ["guard@acme"]);
    await market("1.1.0", `python3 ${R}/scripts/check.py`);
    await w.write(path.join(root, "plugins/guard/hooks/hooks.json"), { hooks: {} });
    const { updateMarketplaces } = await import("../../src/marketplace/index.js");
    await updateMarketplaces(ctx, "acme");
    await updateMarketplacePlugins(ctx, ["guard@acme"]);
    expect(asked).toHaveLength(2);
    expect(asked[1]!.changes.removed.map((e) => e.key)).toEqual(["hook PreToolUse [Bash]"]);
    expect(needsConsent(asked[1]!.changes)).toBe(false);
  });
});

describe("install consent (built CLI)", () => {
  beforeAll(async () => {
    await buildDist();
  }, 180_000);

  it("without a terminal and without --yes: EUNCONFIRMED listing the commands, nothing written; --yes installs", async () => {
    const root = await market("1.0.0", `python3 ${R}/scripts/check.py`);
    const add = await runCli(["marketplace", "add", root], { cwd: w.cwd, home: w.home });
    expect(add.code, add.stderr).toBe(0);
    const refused = await runCli(["install", "guard@acme", "--json"], { cwd: w.cwd, home: w.home });
    expect(refused.code).toBe(1);
    const error = refused.json().error;
    expect(error.code).toBe("EUNCONFIRMED");
    expect(error.message).toMatch(/\+ hook PreToolUse \[Bash\]: python3 .*\/scripts\/check\.py/);
    expect(existsSync(xcshPaths({ home: w.home, xcshHome: w.xcshHome }).installedPlugins)).toBe(false);
    // In the human report the commands are listed once: in the error, not also as notes above it.
    const human = await runCli(["install", "guard@acme"], { cwd: w.cwd, home: w.home });
    expect(human.code).toBe(1);
    expect(human.stderr.match(/\+ hook PreToolUse \[Bash\]: python3 /g)).toHaveLength(1);
    expect(human.stderr).toMatch(/nobody confirmed them:\n\s+\+ hook PreToolUse \[Bash\]: python3 /);
    expect(existsSync(xcshPaths({ home: w.home, xcshHome: w.xcshHome }).installedPlugins)).toBe(false);
    const accepted = await runCli(["install", "guard@acme", "--yes"], { cwd: w.cwd, home: w.home });
    expect(accepted.code, accepted.stderr).toBe(0);
    expect(accepted.stderr).toMatch(/guard@acme 1\.0\.0 runs programs on your machine/);
    expect(existsSync(xcshPaths({ home: w.home, xcshHome: w.xcshHome }).installedPlugins)).toBe(true);
  });
});
