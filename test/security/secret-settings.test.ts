/**
 * A value stored as a secret stays secret (issue 41, class I.1): v1 of a plugin declares
 * `apiKey` with `secret: true` and the user stores a token; v2 forgets `secret: true` (or drops
 * the setting, or changes its type). No command prints the stored token: `config list`, `config
 * list --json`, `config get`, `config validate`, `show`, `list` (human and --json), and the plans
 * of `config set` / `config delete` that replace or remove it (the key declared or not).
 */
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { buildDist } from "../helpers/build-dist.js";
import { runCli } from "../helpers/run-cli.js";
import { type TmpWorld, worldPerTest } from "../helpers/tmp-home.js";

const TOKEN = "tok-0d9e2c51-secret";
const TOOL = 'export default (api) => ({ name: "keyed_tool", label: "t", description: "d", parameters: api.typebox.Type.Object({}), async execute() { return { content: [] }; } });\n';

let w: TmpWorld;
worldPerTest((made) => (w = made), "xcsh-tools-secret-settings-");
beforeAll(async () => {
  await buildDist();
}, 180_000);

const run = (args: string[]) => runCli(args, { cwd: w.cwd, home: w.home });

async function plugin(version: string, settings: Record<string, unknown>): Promise<string> {
  const dir = path.join(w.root, `src-keyed-${version}`);
  await w.write(path.join(dir, "package.json"), { name: "keyed", version, type: "module", xcsh: { tools: "./t.js", settings } });
  await w.write(path.join(dir, "t.js"), TOOL);
  return dir;
}

/** Install v1 (secret), store the token, install v2 with `v2` settings. */
async function storedThenForgotten(v2: Record<string, unknown>): Promise<void> {
  await w.write(path.join(w.home, ".npmrc"), "registry=http://127.0.0.1:9/\n");
  expect((await run(["install", await plugin("1.0.0", { apiKey: { type: "string", secret: true } })])).code).toBe(0);
  const set = await run(["config", "set", "keyed", "apiKey", TOKEN]);
  expect(set.code, set.stderr).toBe(0);
  const updated = await run(["install", await plugin("2.0.0", v2)]);
  expect(updated.code, updated.stderr).toBe(0);
}

const READS: string[][] = [
  ["config", "list", "keyed"],
  ["config", "list", "keyed", "--json"],
  ["config", "get", "keyed", "apiKey"],
  ["config", "get", "keyed", "apiKey", "--json"],
  ["config", "validate", "keyed"],
  ["config", "validate", "keyed", "--json"],
  ["show", "keyed"],
  ["show", "keyed", "--json"],
  ["list"],
  ["list", "--json"],
  // What a removal would delete ("was …"), also for a key the manifest no longer declares.
  ["config", "delete", "keyed", "apiKey", "--dry-run"],
  ["config", "delete", "keyed", "apiKey", "--dry-run", "--json"],
];

describe("a setting stored as a secret, after the plugin's next version forgets it is one", () => {
  it.each([
    { name: "v2 drops secret: true", v2: { apiKey: { type: "string" } } },
    { name: "v2 changes its type (the stored value no longer fits)", v2: { apiKey: { type: "number" } } },
    { name: "v2 no longer declares it", v2: { other: { type: "string" } } },
  ])("$name: no read command prints it", async ({ v2 }) => {
    await storedThenForgotten(v2);
    for (const args of READS) {
      const r = await run(args);
      expect(`${r.stdout}\n${r.stderr}`, args.join(" ")).not.toContain(TOKEN);
    }
    const list = await run(["config", "list", "keyed", "--json"]);
    const setting = (list.json().settings as { key: string; value: unknown; secret: boolean }[]).find((s) => s.key === "apiKey");
    if (setting) expect(setting).toMatchObject({ value: "••••", secret: true });
  }, 60_000);

  it("replacing it (config set --dry-run, then set) and deleting it (--dry-run, --json) never print it", async () => {
    await storedThenForgotten({ apiKey: { type: "string" } });
    for (const args of [
      ["config", "set", "keyed", "apiKey", "plain", "--dry-run"],
      ["config", "set", "keyed", "apiKey", "plain", "--dry-run", "--json"],
      ["config", "delete", "keyed", "apiKey", "--dry-run"],
      ["config", "delete", "keyed", "apiKey", "--dry-run", "--json"],
      ["config", "set", "keyed", "apiKey", "plain", "--json"],
    ]) {
      const r = await run(args);
      expect(r.code, r.stderr).toBe(0);
      expect(`${r.stdout}\n${r.stderr}`, args.join(" ")).not.toContain(TOKEN);
    }
    // The value set under v2 (not a secret there) is shown again.
    expect((await run(["config", "get", "keyed", "apiKey"])).stdout.trim()).toBe("plain");
  }, 60_000);

  it("a value the host stored (no mark of ours) while v1 declared it secret stays masked after the update to v2", async () => {
    await w.write(path.join(w.home, ".npmrc"), "registry=http://127.0.0.1:9/\n");
    expect((await run(["install", await plugin("1.0.0", { apiKey: { type: "string", secret: true } })])).code).toBe(0);
    // The host writes the runtime lock's settings itself, without our secretSettings.
    const lockFile = path.join(w.xcshHome, "plugins", "xcsh-plugins.lock.json");
    const lock = JSON.parse(await readFile(lockFile, "utf8"));
    await writeFile(lockFile, JSON.stringify({ ...lock, settings: { keyed: { apiKey: TOKEN } } }, null, 2));
    expect((await run(["install", await plugin("2.0.0", { apiKey: { type: "string" } })])).code).toBe(0);
    for (const args of READS) {
      const r = await run(args);
      expect(`${r.stdout}\n${r.stderr}`, args.join(" ")).not.toContain(TOKEN);
    }
  }, 60_000);
});
