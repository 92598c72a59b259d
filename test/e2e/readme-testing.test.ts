/**
 * The README's `xcsh-tools/testing` example runs as written: its `testing-example` block becomes
 * `test/greet.test.ts` of a temp project, the README's `tool-example` becomes `tools/greet.ts`,
 * the project's node_modules links vitest, TypeBox and xcsh-tools to this checkout (as an
 * install would, without the network), and vitest must pass every test of the example.
 */
import { readFileSync } from "node:fs";
import { mkdir, symlink } from "node:fs/promises";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { hermeticEnv, runProcess } from "../helpers/run-cli.js";
import { REPO_ROOT } from "../helpers/runtimes.js";
import { makeTmpWorld, type TmpWorld } from "../helpers/tmp-home.js";

const README = readFileSync(path.join(REPO_ROOT, "README.md"), "utf8");

/** The fenced block right after `<!-- readme-test: name -->` (the convention of readme.test.ts). */
function block(name: string): { lang: string; code: string } {
  const marker = `<!-- readme-test: ${name} -->`;
  const at = README.indexOf(marker);
  const match = at < 0 ? null : /^\s*```(\w*)\n([\s\S]*?)\n```/.exec(README.slice(at + marker.length));
  if (!match) throw new Error(`README.md has no fenced block after ${marker}`);
  return { lang: match[1] ?? "", code: `${match[2]}\n` };
}

const worlds: TmpWorld[] = [];
afterAll(async () => {
  await Promise.all(worlds.map((w) => w.cleanup()));
});

describe("README: the xcsh-tools/testing example", () => {
  it("runs as written under vitest against the README's own tool", { timeout: 120_000 }, async () => {
    const example = block("testing-example");
    expect(example.lang).toBe("ts");
    const w = await makeTmpWorld("xcsh-tools-readme-testing-");
    worlds.push(w);
    const project = path.join(w.root, "greet-tool");
    await w.write(path.join(project, "package.json"), { name: "greet-tool", private: true, type: "module" });
    await w.write(path.join(project, "tools", "greet.ts"), block("tool-example").code);
    await w.write(path.join(project, "test", "greet.test.ts"), example.code);
    await mkdir(path.join(project, "node_modules", "@sinclair"), { recursive: true });
    await symlink(REPO_ROOT, path.join(project, "node_modules", "xcsh-tools"), "dir");
    await symlink(path.join(REPO_ROOT, "node_modules", "vitest"), path.join(project, "node_modules", "vitest"), "dir");
    await symlink(path.join(REPO_ROOT, "node_modules", "@sinclair", "typebox"), path.join(project, "node_modules", "@sinclair", "typebox"), "dir");
    const vitest = path.join(project, "node_modules", "vitest", "vitest.mjs");
    const result = await runProcess(process.execPath, [vitest, "run", "--reporter=verbose"], { cwd: project, env: hermeticEnv(w.home), timeoutMs: 120_000 });
    expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
    expect(result.stdout).toMatch(/Tests\s+3 passed \(3\)/);
  });
});
