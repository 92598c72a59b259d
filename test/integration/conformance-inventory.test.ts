/**
 * Inventory and cost conformance (issue 45, point 6): `xcsh-tools show --json` and `list --json`
 * agree with what the pinned Claude Code's `claude plugin details` said of each plugin of
 * test/fixtures/conformance/inventory/, recorded by `npm run conformance:record` in
 * inventory.json (Claude Code never runs here).
 *
 * Each fixture is installed the way a user installs it — one local catalog holding them all,
 * `marketplace add`, `install` — into a temporary HOME, then:
 * - the components Claude Code lists, by kind (skills with commands among them, agents, hook
 *   events, MCP and LSP servers), are ours, name for name;
 * - the always-on total is within 5% of Claude Code's (1 token below 20: both round);
 * - each skill's and agent's always-on and on-invoke figures, and the on-invoke total, fall in
 *   what Claude Code printed ("~130" is 125–135, "~1.1k" 1,050–1,150, "< 20" below 20),
 *   widened by 5%.
 */
import { cpSync, readdirSync, readFileSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildDist } from "../helpers/build-dist.js";
import { runCli } from "../helpers/run-cli.js";
import { makeTmpWorld, type TmpWorld } from "../helpers/tmp-home.js";

const FIXTURES = path.resolve(__dirname, "..", "fixtures", "conformance", "inventory");
const MARKETPLACE = "conformance-inventory";

interface Recorded {
  skills: string[];
  agents: string[];
  hooks: string[];
  mcpServers: string[];
  lspServers: string[];
  alwaysOn: number;
  components: { name: string; alwaysOn: string; onInvoke: string }[];
}
const RECORDED = JSON.parse(readFileSync(path.join(FIXTURES, "..", "inventory.json"), "utf8")) as { claudeCode: string; fixtures: Record<string, Recorded> };
const IDS = readdirSync(FIXTURES, { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name)
  .sort();
const TOLERANCE = 0.05;

/** The range a figure `details` printed stands for: it rounds to tens, and to hundreds past 1,000 ("~1.1k"). */
export function printedRange(text: string): [number, number] {
  if (text === "< 20") return [0, 19.5];
  const k = /^~([\d.]+)k$/.exec(text);
  if (k) return [Number(k[1]) * 1000 - 50, Number(k[1]) * 1000 + 50];
  const n = Number(text.replace(/^~/, "").replaceAll(",", ""));
  if (!Number.isFinite(n)) throw new Error(`not a figure details prints: ${text}`);
  return [n - 5, n + 5];
}

/** Whether `ours` is in `[lo, hi]` widened by the tolerance (and half a token each way: both round). */
function within(ours: number, [lo, hi]: [number, number]): boolean {
  return ours >= lo * (1 - TOLERANCE) - 0.5 && ours <= hi * (1 + TOLERANCE) + 0.5;
}

let w: TmpWorld;
const shown = new Map<string, any>();
let listed: any;

beforeAll(async () => {
  await buildDist();
  w = await makeTmpWorld("xcsh-tools-inventory-");
  // One catalog holding every fixture, as the recorder gave them to Claude Code (without case.json).
  const catalog = path.join(w.root, "catalog");
  for (const id of IDS) {
    cpSync(path.join(FIXTURES, id), path.join(catalog, "plugins", id), { recursive: true });
    rmSync(path.join(catalog, "plugins", id, "case.json"), { force: true });
  }
  mkdirSync(path.join(catalog, ".claude-plugin"));
  writeFileSync(path.join(catalog, ".claude-plugin", "marketplace.json"), JSON.stringify({ name: MARKETPLACE, owner: { name: "xcsh-tools conformance" }, plugins: IDS.map((id) => ({ name: id, source: `./plugins/${id}`, description: `Inventory fixture ${id}` })) }));
  const added = await runCli(["marketplace", "add", catalog], { cwd: w.cwd, home: w.home });
  expect(added.code, added.stderr).toBe(0);
  for (const id of IDS) {
    const installed = await runCli(["install", `${id}@${MARKETPLACE}`, "--yes"], { cwd: w.cwd, home: w.home });
    expect(installed.code, `${id}: ${installed.stderr}`).toBe(0);
    const show = await runCli(["show", `${id}@${MARKETPLACE}`, "--json"], { cwd: w.cwd, home: w.home });
    expect(show.code, `${id}: ${show.stderr}`).toBe(0);
    shown.set(id, show.json().plugins[0]);
  }
  const list = await runCli(["list", "--json"], { cwd: w.cwd, home: w.home });
  expect(list.code, list.stderr).toBe(0);
  listed = list.json();
}, 300_000);

afterAll(async () => {
  await w?.cleanup();
});

describe(`inventory and cost agree with Claude Code ${RECORDED.claudeCode} (claude plugin details)`, () => {
  it("every fixture is recorded and every recording has its fixture", () => {
    expect(Object.keys(RECORDED.fixtures).sort()).toEqual(IDS);
  });

  describe.each(IDS)("%s", (id) => {
    const cc = RECORDED.fixtures[id]!;

    it("lists the components Claude Code lists, by kind and name", () => {
      const ours = shown.get(id).inventory;
      for (const kind of ["skills", "agents", "hooks", "mcpServers", "lspServers"] as const) expect([...ours[kind]].sort(), kind).toEqual([...cc[kind]].sort());
    });

    it("list counts them as Claude Code does", () => {
      const row = [...(listed.marketplacePlugins ?? []), ...(listed.plugins ?? [])].find((p: any) => p.id === `${id}@${MARKETPLACE}`);
      expect(row, `${id} in list --json`).toBeDefined();
      const counts = row.components.counts;
      expect({ skill: counts.skill ?? 0, agent: counts.agent ?? 0, hook: counts.hook ?? 0, "mcp-server": counts["mcp-server"] ?? 0, "lsp-server": counts["lsp-server"] ?? 0 }).toEqual({
        skill: cc.skills.length,
        agent: cc.agents.length,
        hook: cc.hooks.length,
        "mcp-server": cc.mcpServers.length,
        "lsp-server": cc.lspServers.length,
      });
      expect(row.components.tokens.alwaysOn).toBe(shown.get(id).cost.alwaysOn);
    });

    it("estimates the always-on total within 5%", () => {
      const ours = shown.get(id).cost.alwaysOn as number;
      expect(Math.abs(ours - cc.alwaysOn), `ours ${ours}, Claude Code ${cc.alwaysOn}`).toBeLessThanOrEqual(Math.max(cc.alwaysOn * TOLERANCE, cc.alwaysOn < 20 ? 1 : 0));
    });

    it("prices each skill and agent, and the on-invoke total, as Claude Code printed them", () => {
      const components = (shown.get(id).components as any[]).filter((c) => ["skill", "agent"].includes(c.filedAs ?? c.kind));
      expect(components.map((c) => c.name).sort()).toEqual(cc.components.map((c) => c.name).sort());
      let lo = 0;
      let hi = 0;
      for (const printed of cc.components) {
        const ours = components.find((c) => c.name === printed.name)!;
        expect(within(ours.cost.alwaysOn, printedRange(printed.alwaysOn)), `${printed.name} always-on: ours ${ours.cost.alwaysOn}, Claude Code ${printed.alwaysOn}`).toBe(true);
        expect(within(ours.cost.onInvoke, printedRange(printed.onInvoke)), `${printed.name} on-invoke: ours ${ours.cost.onInvoke}, Claude Code ${printed.onInvoke}`).toBe(true);
        const range = printedRange(printed.onInvoke);
        lo += range[0];
        hi += range[1];
      }
      expect(within(shown.get(id).cost.onInvoke, [lo, hi]), `on-invoke total ${shown.get(id).cost.onInvoke} in ${lo}–${hi}`).toBe(true);
    });
  });

  it("reads the figures details prints", () => {
    expect(printedRange("< 20")).toEqual([0, 19.5]);
    expect(printedRange("~130")).toEqual([125, 135]);
    expect(printedRange("~1.1k")).toEqual([1050, 1150]);
    expect(() => printedRange("many")).toThrow(/not a figure/);
  });
});
