/**
 * Argument hygiene of the CLI: every usage error, ours or commander's, is coded (`Code:` on
 * stderr, `{error: {code}}` under --json) and exits 2; path flags name existing folders; one
 * error code exits the same from every command; the aliases npm users type; help says what each
 * command does.
 */
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/run-cli.js";
import { makeTmpWorld, type TmpWorld } from "../helpers/tmp-home.js";

let w: TmpWorld;
beforeAll(async () => {
  w = await makeTmpWorld("xcsh-tools-usage-", { trustProject: true });
});
afterAll(async () => {
  await w.cleanup();
});

const cli = (args: string[]) => runCli(args, { cwd: w.cwd, home: w.home });

describe("usage errors", () => {
  const cases: [title: string, args: () => string[], message: RegExp][] = [
    ["--cwd that does not exist", () => ["tools", "--cwd", path.join(w.root, "nonexistent")], /--cwd .*nonexistent does not exist/],
    ["--cwd relative to nothing", () => ["tools", "--cwd", "path/to/project"], /--cwd .*path\/to\/project does not exist/],
    ["--cwd that is a file", () => ["list", "--cwd", "/dev/null"], /--cwd \/dev\/null is not a folder/],
    ["--home that is a file", () => ["list", "--home", "/dev/null"], /--home \/dev\/null is not a folder/],
    ["--home whose parent does not exist", () => ["list", "--home", path.join(w.root, "no", "such", "root")], /--home .* does not exist/],
    ["tools --path that names nothing", () => ["tools", "--path", "no-such-tools"], /--path no-such-tools does not exist/],
    ["doctor --dry-run without --fix", () => ["doctor", "--dry-run"], /doctor --dry-run needs --fix/],
    ["commander: unknown command", () => ["no-such-command"], /unknown command 'no-such-command'/],
    ["commander: unknown option", () => ["tools", "--no-such-flag"], /unknown option '--no-such-flag'/],
    ["install with no spec where no set is declared", () => ["install"], /install needs at least one spec/],
    ["commander: missing argument", () => ["link"], /missing required argument/],
    ["commander: option without its value", () => ["list", "--scope"], /option '--scope <scope>' argument missing/],
  ];
  for (const [title, args, message] of cases) {
    it(`${title}: EUSAGE, exit 2, Code: line`, async () => {
      const human = await cli(args());
      expect({ code: human.code, stdout: human.stdout }, human.stderr).toEqual({ code: 2, stdout: "" });
      expect(human.stderr).toMatch(message);
      expect(human.stderr).toMatch(/^Code: EUSAGE$/m);
      expect(human.stderr).toMatch(/^Try this: /m);
      const json = await cli([...args(), "--json"]);
      expect(json.code).toBe(2);
      expect(json.stderr).toBe("");
      expect(json.json()).toMatchObject({ error: { code: "EUSAGE", message: expect.stringMatching(message) } });
    });
  }

  it("a --home that does not exist yet but can be created is accepted", async () => {
    const r = await cli(["list", "--home", path.join(w.root, "fresh-root")]);
    expect(r.code, r.stderr).toBe(0);
  });

  it("one exit code per error code: `install /` and `link /` are both ENOT_FOUND, exit 1", async () => {
    const install = await cli(["install", "/"]);
    const link = await cli(["link", "/"]);
    expect(install.stderr).toMatch(/^Code: ENOT_FOUND$/m);
    expect(link.stderr).toMatch(/^Code: ENOT_FOUND$/m);
    expect([install.code, link.code]).toEqual([1, 1]);
  });
});

describe("aliases and help", () => {
  it("-v prints the version, as -V and --version do", async () => {
    const [v, V, long] = await Promise.all([cli(["-v"]), cli(["-V"]), cli(["--version"])]);
    expect(v.code).toBe(0);
    expect(v.stdout).toMatch(/^\d+\.\d+\.\d+/);
    expect([V.stdout, long.stdout]).toEqual([v.stdout, v.stdout]);
  });

  it("i, rm, remove and ls are install, uninstall and list", async () => {
    expect((await cli(["i", "--help"])).stdout).toMatch(/^Usage: xcsh-tools install\|i /m);
    expect((await cli(["rm", "--help"])).stdout).toMatch(/^Usage: xcsh-tools uninstall\|rm /m);
    expect((await cli(["remove", "--help"])).stdout).toMatch(/^Usage: xcsh-tools uninstall\|rm /m);
    const ls = await cli(["ls", "--json"]);
    expect(ls.code, ls.stderr).toBe(0);
    expect(ls.json()).toMatchObject({ plugins: [] });
  });

  it("install --help says it installs npm and marketplace plugins", async () => {
    const help = (await cli(["install", "--help"])).stdout;
    // The description (between the usage line and the options), not an option's text.
    const description = help.slice(help.indexOf("\n\n"), help.indexOf("Options:")).replace(/\s+/g, " ");
    expect(description).toMatch(/from npm/);
    expect(description).toMatch(/marketplace \(name@marketplace\)/);
  });

  it("every command's help says what it does", async () => {
    const top = await cli(["--help"]);
    const names = [...top.stdout.slice(top.stdout.indexOf("Commands:")).matchAll(/^ {2}([a-z][a-z-]*)/gm)].map((m) => m[1]!).filter((n) => n !== "help");
    expect(names).toEqual(expect.arrayContaining(["install", "uninstall", "list", "validate", "tools", "new", "doctor", "marketplace"]));
    for (const name of names) {
      const help = await cli([name, "--help"]);
      expect(help.code, name).toBe(0);
      // The line after "Usage:" and a blank line is the description: a sentence of its own.
      const description = /^Usage: .*\n\n(.+)/m.exec(help.stdout)?.[1] ?? "";
      expect(description.length, `${name}: ${help.stdout}`).toBeGreaterThan(20);
    }
  });
});
