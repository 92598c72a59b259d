/**
 * What the user sees cannot be forged (issue 41, classes E, F, G), through the built CLI:
 * - E: text from catalogs, plugin folders and package.json (names, descriptions, hook and MCP
 *   commands, arguments and env) that holds escape sequences, CR, BEL, OSC 8 hyperlinks, bidi
 *   overrides, C1 CSI and NUL reaches no stream raw, whatever command prints it: it is shown
 *   escaped (`\x1b`, `\u202e`), and a newline inside a value cannot start a line of its own.
 *   `--json` stays valid JSON with no raw DEL, C1 or bidi character, and its values parse back
 *   to the strings they were.
 * - F: credentials in URLs (userinfo, query tokens) never reach stdout or stderr.
 * - G: an error is printed once, not again as its own cause.
 */
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildDist } from "../helpers/build-dist.js";
import { useGlobalRegistry } from "../helpers/global-registry.js";
import { startHttpServer, type TestHttpServer } from "../helpers/http-server.js";
import { catalog, catalogPath } from "../helpers/marketplace-fixtures.js";
import { runOnPty } from "../helpers/pty.js";
import type { RegistryHandle } from "../helpers/registry.js";
import { runCli, type ProcessResult } from "../helpers/run-cli.js";
import { type TmpWorld, worldPerTest, writeUserNpmrc } from "../helpers/tmp-home.js";

/** Every kind of byte that moves, erases, rings, links or reorders, then a forged line of ours. */
const HOSTILE = "X\u001b[2K\rFAKE\u0007\u001b]8;;https://evil.example/\u0007link\u001b]8;;\u0007\u202egnp.exe\u202c\u009b31m\u0000\u007f\u2066i\u2069\nCode: EOK";
/** How HOSTILE must read on a terminal: every unsafe character escaped, the newline too. */
const SHOWN = String.raw`X\x1b[2K\rFAKE\x07\x1b]8;;https://evil.example/\x07link\x1b]8;;\x07\u202egnp.exe\u202c\x9b31m\x00\x7f\u2066i\u2069\nCode: EOK`;
/** What may never be in a stream: controls but the newline, bidi formatting, line/paragraph separators. */
const RAW = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\p{Bidi_Control}\u2028\u2029]/u;
/** What JSON.stringify leaves raw. */
const RAW_IN_JSON = /[\u007f-\u009f\p{Bidi_Control}\u2028\u2029]/u;

const R = "$" + "{CLAUDE_PLUGIN_ROOT}";

let w: TmpWorld;
worldPerTest((made) => (w = made), "xcsh-tools-terminal-");
beforeAll(async () => {
  await buildDist();
}, 180_000);

function cli(args: string[]): Promise<ProcessResult> {
  return runCli(args, { cwd: w.cwd, home: w.home });
}

/** Neither stream holds a raw unsafe character. */
function expectClean(r: ProcessResult): void {
  const found = RAW.exec(r.stdout) ?? RAW.exec(r.stderr);
  expect(found, `raw U+${found?.[0].codePointAt(0)!.toString(16).padStart(4, "0")} in\n${JSON.stringify({ stdout: r.stdout, stderr: r.stderr })}`).toBeNull();
}

/** No line of either stream is a forged `Code: EOK`. */
function expectNoForgedLine(r: ProcessResult): void {
  for (const line of `${r.stdout}\n${r.stderr}`.split("\n")) expect(line).not.toMatch(/^Code: EOK/);
}

/** A `--json` run: valid JSON, nothing JSON leaves raw, and HOSTILE parsed back exactly somewhere in it. */
function expectCleanJson(r: ProcessResult, mustHold = true): unknown {
  expectClean(r);
  expect(RAW_IN_JSON.test(r.stdout)).toBe(false);
  const doc = r.json();
  if (mustHold) expect(JSON.stringify(doc)).toContain(JSON.stringify(HOSTILE).slice(1, -1));
  return doc;
}

/** A folder marketplace `evilmk` whose catalog and plugin `guard` carry HOSTILE everywhere text is free. */
async function hostileMarket(): Promise<string> {
  const root = path.join(w.root, "market");
  await w.write(path.join(root, catalogPath()), catalog("evilmk", [{ name: "guard", source: "./plugins/guard", version: "1.0.0", description: HOSTILE, keywords: [HOSTILE], category: HOSTILE }], { description: HOSTILE, owner: { name: HOSTILE } }));
  await w.write(path.join(root, "plugins/guard/.claude-plugin/plugin.json"), { name: "guard", version: "1.0.0", description: HOSTILE });
  await w.write(path.join(root, "plugins/guard/hooks/hooks.json"), { hooks: { PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: `python3 ${R}/check.py ${HOSTILE}` }] }] } });
  await w.write(path.join(root, "plugins/guard/.mcp.json"), { mcpServers: { [`srv${HOSTILE}`]: { command: `node${HOSTILE}`, args: ["--flag", HOSTILE], env: { [`K${HOSTILE}`]: HOSTILE } } } });
  await w.write(path.join(root, "plugins/guard/skills/s/SKILL.md"), `---\ndescription: ${JSON.stringify(HOSTILE)}\n---\nbody\n`);
  await w.write(path.join(root, "plugins/guard/check.py"), "print('ok')\n");
  return root;
}

describe("E: text from outside is shown escaped, in every command (marketplace plugin)", () => {
  it("marketplace add, discover, search and list: human and --json", async () => {
    const root = await hostileMarket();
    for (const args of [["marketplace", "add", root], ["marketplace", "discover"], ["marketplace", "discover", "evilmk"], ["marketplace", "search", "gnp"], ["marketplace", "list"]]) {
      const r = await cli(args);
      expect(r.code, r.stderr).toBe(0);
      expectClean(r);
      expectNoForgedLine(r);
    }
    const discover = await cli(["marketplace", "discover"]);
    expect(discover.stdout).toContain(SHOWN);
    for (const args of [["marketplace", "discover", "--json"], ["marketplace", "list", "--json"], ["marketplace", "search", "gnp", "--json"]]) {
      const r = await cli(args);
      expect(r.code, r.stderr).toBe(0);
      expectCleanJson(r, args[1] !== "list");
    }
  });

  it("install: the consent lines, the refusal (EUNCONFIRMED) and --dry-run show every command escaped, one line each", async () => {
    const root = await hostileMarket();
    expect((await cli(["marketplace", "add", root])).code).toBe(0);
    const refused = await cli(["install", "guard@evilmk"]);
    expect(refused.code).toBe(1);
    expectClean(refused);
    expectNoForgedLine(refused);
    expect(refused.stderr).toContain("Code: EUNCONFIRMED");
    // The consent line names the real command, escaped, on one line.
    expect(refused.stderr).toContain(`python3 `);
    expect(refused.stderr.split("\n").filter((l) => l.includes("check.py")).every((l) => l.endsWith(SHOWN))).toBe(true);
    expect(refused.stderr).toContain(`mcp-server srv${SHOWN}: node${SHOWN} --flag ${SHOWN}`);
    const refusedJson = await cli(["install", "guard@evilmk", "--json"]);
    expect(refusedJson.code).toBe(1);
    expectClean(refusedJson);
    expect(RAW_IN_JSON.test(refusedJson.stdout)).toBe(false);
    expect(refusedJson.json().error.code).toBe("EUNCONFIRMED");

    const dry = await cli(["install", "guard@evilmk", "--dry-run"]);
    expect(dry.code, dry.stderr).toBe(0);
    expectClean(dry);
    expectNoForgedLine(dry);
    expect(dry.stderr).toContain(`node${SHOWN} --flag ${SHOWN}`);
  });

  it("install --yes, then list, show, tools, doctor and validate: human and --json", async () => {
    const root = await hostileMarket();
    expect((await cli(["marketplace", "add", root])).code).toBe(0);
    const installed = await cli(["install", "guard@evilmk", "--yes"]);
    expect(installed.code, installed.stderr).toBe(0);
    expectClean(installed);
    expectNoForgedLine(installed);
    expect(installed.stderr).toContain(`node${SHOWN} --flag ${SHOWN}`);
    for (const args of [["list"], ["show", "guard@evilmk"], ["tools"], ["doctor"], ["validate", path.join(root, "plugins/guard")], ["validate", root]]) {
      const r = await cli(args);
      expect(r.code === 0 || r.code === 1 || r.code === 2, r.stderr).toBe(true);
      expectClean(r);
      expectNoForgedLine(r);
    }
    expect((await cli(["show", "guard@evilmk"])).stdout).toContain(`node${SHOWN} --flag ${SHOWN}`);
    for (const args of [["list", "--json"], ["show", "guard@evilmk", "--json"], ["tools", "--json"], ["doctor", "--json"], ["validate", path.join(root, "plugins/guard"), "--json"]]) {
      const r = await cli(args);
      expectCleanJson(r, args[0] === "show" || args[0] === "validate");
    }
  });

  it("an error that quotes a bad catalog field (ECATALOG_INVALID) shows it escaped, and no forged line", async () => {
    const root = path.join(w.root, "bad-market");
    await w.write(path.join(root, catalogPath()), catalog("badmk", [{ name: "guard", source: "./plugins/guard" }], { owner: HOSTILE }));
    await w.write(path.join(root, "plugins/guard/.claude-plugin/plugin.json"), { name: "guard" });
    const r = await cli(["marketplace", "add", root]);
    expect(r.code).toBe(2);
    expectClean(r);
    expectNoForgedLine(r);
    expect(r.stderr).toContain("Code: ECATALOG_INVALID");
    // The value as the message quotes it (JSON, cut at 60 characters): the bidi characters JSON leaves raw are escaped too.
    expect(r.stderr).toContain(String.raw`/owner: expected an object, found "X\u001b[2K\rFAKE\u0007\u001b]8;;https://evil.example/\u0007link\u001b]8;;\u0007\u202egnp.exe\u202c..."`);
    const json = await cli(["marketplace", "add", root, "--json"]);
    expect(json.code).toBe(2);
    expectClean(json);
    expect(RAW_IN_JSON.test(json.stdout)).toBe(false);
    expect(json.json().error.code).toBe("ECATALOG_INVALID");
  });

  it("on a terminal with colors on: the consent lines and the question are escaped, our colors stay", async () => {
    const root = await hostileMarket();
    expect((await cli(["marketplace", "add", root])).code).toBe(0);
    const r = await runOnPty(["install", "guard@evilmk"], w, "n", { NO_COLOR: undefined });
    expect(r.asked, r.screen).toBe(true);
    expect(r.code, r.screen).toBe(1);
    // Our heading in yellow; the hostile sequences only in their escaped form.
    expect(r.screen).toContain("\u001b[33mguard@evilmk 1.0.0 runs programs on your machine:\u001b[39m");
    expect(r.screen).toContain(`node${SHOWN} --flag ${SHOWN}`);
    for (const raw of ["\u001b]8;;", "\rFAKE", "FAKE\u0007", "\u202e", "\u2066", "\u009b", "\u0000", "\u007f"]) expect(r.screen.includes(raw), JSON.stringify(raw)).toBe(false);
  });

  it("a warning that quotes a bad plugin name shows it escaped on one line", async () => {
    const root = path.join(w.root, "named-market");
    await w.write(path.join(root, catalogPath()), catalog("namedmk", [{ name: HOSTILE, source: "./plugins/guard" }]));
    const r = await cli(["marketplace", "add", root]);
    expect(r.code, r.stderr).toBe(0);
    expectClean(r);
    expectNoForgedLine(r);
    expect(r.stderr).toContain(`plugin name "${SHOWN}" is invalid`);
  });
});

describe("E: an npm plugin's package.json (local Verdaccio)", () => {
  let reg: RegistryHandle & { dispose(): Promise<void> };
  const name = `evil-desc-${Date.now().toString(36)}`;
  beforeAll(async () => {
    reg = await useGlobalRegistry();
    await reg.publish({
      name,
      version: "1.0.0",
      packageJson: { type: "module", description: HOSTILE, keywords: [HOSTILE], xcsh: { tools: "./t.js", hooks: "./hooks/guard.js", extensions: ["./ext/watch.js"] } },
      files: {
        "t.js": `export default (api) => ({ name: "evil_tool", label: ${JSON.stringify(HOSTILE)}, description: ${JSON.stringify(HOSTILE)}, parameters: api.typebox.Type.Object({}), async execute() { return { content: [] }; } });\n`,
        "hooks/guard.js": "export default function () {}\n",
        "ext/watch.js": "export default function () {}\n",
      },
    });
  }, 120_000);
  afterAll(async () => {
    await reg?.dispose();
  });

  it("install (refused, --dry-run, --yes), list, show, tools: no raw byte; --json round-trips", async () => {
    await writeUserNpmrc(w.home, reg.url);
    for (const args of [["install", name], ["install", name, "--dry-run"], ["install", name, "--yes"], ["list"], ["show", name], ["tools"], ["doctor"]]) {
      const r = await cli(args);
      expectClean(r);
      expectNoForgedLine(r);
    }
    expect((await cli(["list"])).stdout).toContain(name);
    for (const args of [["list", "--json"], ["show", name, "--json"], ["tools", "--json"]]) {
      const r = await cli(args);
      expect(r.code, r.stderr).toBe(0);
      expectCleanJson(r, args[0] === "tools");
    }
  });
});

describe("F: credentials in URLs never reach the output", () => {
  let http: TestHttpServer;
  beforeAll(async () => {
    http = await startHttpServer();
    http.set("/m/marketplace.json", catalog("tokened", [{ name: "remote", source: { source: "github", repo: "acme/remote" } }]));
  });
  afterAll(async () => {
    await http?.close();
  });
  const SECRETS = ["u53rname", "s3cr3tpw", "q7tokval", "s1gval", "amzsig"];
  function expectNoSecret(r: ProcessResult): void {
    for (const secret of SECRETS) {
      expect(r.stdout, r.stdout).not.toContain(secret);
      expect(r.stderr, r.stderr).not.toContain(secret);
    }
  }

  it("a catalog URL with a token in its query: add, list, list --json, update, and its failure", async () => {
    const url = `${http.url}/m/marketplace.json?token=q7tokval&sig=s1gval&X-Amz-Signature=amzsig&ref=main`;
    for (const args of [["marketplace", "add", url], ["marketplace", "list"], ["marketplace", "list", "--json"], ["marketplace", "update"], ["marketplace", "update", "--json"], ["marketplace", "discover"], ["list"], ["list", "--json"]]) {
      const r = await cli(args);
      expect(r.code, r.stderr).toBe(0);
      expectNoSecret(r);
    }
    const listed = await cli(["marketplace", "list"]);
    expect(listed.stdout).toContain("?token=***&sig=***&X-Amz-Signature=***&ref=main");
    // The catalog goes away: the update fails naming the URL.
    http.set("/m/marketplace.json", undefined);
    for (const args of [["marketplace", "update"], ["marketplace", "update", "--json"], ["marketplace", "list"]]) {
      const r = await cli(args);
      expectNoSecret(r);
    }
    const gone = await cli(["marketplace", "add", `${http.url}/gone/marketplace.json?access_token=q7tokval`]);
    expect(gone.code).not.toBe(0);
    expect(gone.stderr).toContain("access_token=***");
    expectNoSecret(gone);
  });

  it("userinfo in a catalog URL and in a git remote that fails: the errors, human and --json", async () => {
    for (const source of [`http://u53rname:s3cr3tpw@127.0.0.1:${new URL(http.url).port}/m/marketplace.json?token=q7tokval`, "https://u53rname:s3cr3tpw@127.0.0.1:1/acme/plugins.git", "git+https://u53rname:s3cr3tpw@127.0.0.1:1/acme/plugins.git", "https://q7tokval@127.0.0.1:1/acme/plugins.git"]) {
      for (const json of [false, true]) {
        const r = await cli(["marketplace", "add", source, ...(json ? ["--json"] : [])]);
        expect(r.code).not.toBe(0);
        expectNoSecret(r);
        if (json) expect(r.json().error.message).toMatch(/\*\*\*@127\.0\.0\.1/);
        else expect(r.stderr).toMatch(/\*\*\*@127\.0\.0\.1/);
      }
    }
  });

  it("npm specs with credentials (a tarball URL, a git URL) that fail: the progress lines and the errors, human and --json", async () => {
    await writeUserNpmrc(w.home, "http://127.0.0.1:9/");
    for (const spec of ["http://u53rname:s3cr3tpw@127.0.0.1:1/x.tgz?token=q7tokval", "git+https://u53rname:s3cr3tpw@127.0.0.1:1/acme/plugin.git"]) {
      for (const json of [false, true]) {
        const r = await cli(["install", spec, ...(json ? ["--json"] : [])]);
        expect(r.code).not.toBe(0);
        expectNoSecret(r);
        if (!json) expect(r.stderr).toContain(`Installing ${spec.replace("u53rname:s3cr3tpw", "***").replace("q7tokval", "***")}`);
      }
    }
  });

  it("a stored marketplace whose source URL holds credentials (added by an older version): list and --json hide them", async () => {
    const url = `${http.url}/m/marketplace.json`;
    http.set("/m/marketplace.json", catalog("tokened", [{ name: "remote", source: { source: "github", repo: "acme/remote" } }]));
    expect((await cli(["marketplace", "add", url])).code).toBe(0);
    const file = path.join(w.xcshHome, "marketplaces.json");
    const stored = await readFile(file, "utf8");
    expect(stored).toContain(url);
    await writeFile(file, stored.split(url).join(url.replace("http://", "http://u53rname:s3cr3tpw@") + "?token=q7tokval"));
    for (const args of [["marketplace", "list"], ["marketplace", "list", "--json"], ["list"], ["list", "--json"], ["marketplace", "update"], ["marketplace", "update", "--json"], ["doctor"], ["doctor", "--json"]]) {
      const r = await cli(args);
      expectNoSecret(r);
    }
  });
});

describe("G: an error is printed once, not again as its own cause", () => {
  it("a catalog that is not JSON: the parse error is not repeated as a cause", async () => {
    const root = path.join(w.root, "broken-market");
    await w.write(path.join(root, catalogPath()), '{"name": "x", ');
    const r = await cli(["marketplace", "add", root]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("Code: ECATALOG_INVALID");
    expect(r.stderr.match(/is not valid JSON/g)).toHaveLength(1);
    expect(r.stderr).not.toContain("Caused by:");
  });

  it("a fetch that fails: the network error shows once", async () => {
    const r = await cli(["marketplace", "add", "http://u53rname:pw@127.0.0.1:1/m/marketplace.json"]);
    expect(r.code).not.toBe(0);
    expect(r.stderr.match(/Request cannot be constructed from a URL that includes credentials/g)).toHaveLength(1);
  });
});
