/**
 * The seed-satisfied restore (teamset/fast-seed.ts, docs/design/fleets.md): `install` with no spec
 * on a machine whose seeds hold the project's whole lock writes the host files without loading the
 * restore engine, and its stdout, `--json` and files are the engine's, byte for byte (the engine
 * is made to run by repeating `--yes`, which commander accepts and the fast paths leave to it).
 * Anything it cannot answer exactly (a tampered seed, a plugin no seed holds, an untrusted
 * project, a lock --frozen refuses, --offline with something missing) is tried and handed to the
 * engine, which says why. The built CLI as a process, no terminal; a loader hook logs the modules.
 */
import { execFile } from "node:child_process";
import { cp, mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildDist, modulesOfLoadedFiles } from "../helpers/build-dist.js";
import { isolatedGitEnv } from "../helpers/git-remote.js";
import { useGlobalRegistry } from "../helpers/global-registry.js";
import type { RegistryHandle } from "../helpers/registry.js";
import { cliArgv, hermeticEnv, runCli, runProcess, type ProcessResult } from "../helpers/run-cli.js";
import type { TmpWorld } from "../helpers/tmp-home.js";
import { makeWritable, refusal, removeWorlds, seedImage, teamMachine } from "../helpers/seeds.js";
import { toolName, toolSource } from "./plugins-fixtures.js";

const LONG = 300_000;
const exec = promisify(execFile);
const FAST = "/src/teamset/fast-seed.ts";
const ENGINE = "/src/teamset/restore.ts";
/** The CLI's way into the engine (its trust check comes before the engine's modules load). */
const ENGINE_CLI = "/src/cli/team-restore.ts";

describe("a restore the seeds satisfy: the engine's files and output, without the engine", () => {
  let reg: RegistryHandle & { dispose(): Promise<void> };
  const tag = Math.random().toString(36).slice(2, 8);
  const p1 = `@seedfast/p1-${tag}`;
  const p2 = `@seedfast/p2-${tag}`;
  let image: TmpWorld;
  let seed: string;
  const worlds: TmpWorld[] = [];

  /** A clean machine: its own HOME, the project's committed files, trusted (unless told). */
  const machine = (trusted = true): Promise<TmpWorld> => teamMachine(image.cwd, reg.url, worlds, "xcsh-seedfast-run-", trusted);

  /** `xcsh-tools <args>` with the seeds and a loader hook: the result and the source modules it loaded. */
  async function logged(w: TmpWorld, args: string[], seeds: string, policy?: string): Promise<{ r: ProcessResult; modules: string[] }> {
    const log = path.join(w.root, `modules-${Math.random().toString(36).slice(2)}.log`);
    const hooks = await w.write(path.join(w.root, "hooks", "log-hooks.mjs"), `import { appendFileSync } from "node:fs";\nexport async function resolve(specifier, context, next) {\n  const result = await next(specifier, context);\n  appendFileSync(${JSON.stringify(log)}, result.url + "\\n");\n  return result;\n}\n`);
    const register = await w.write(path.join(w.root, "hooks", "register.mjs"), `import { register } from "node:module";\nregister(${JSON.stringify(`file://${hooks}`)});\n`);
    const r = await runProcess(process.execPath, ["--import", register, ...cliArgv(w.home, args, policy ? { managedPolicy: policy } : {})], { cwd: w.cwd, env: hermeticEnv(w.home, { XCSH_PLUGIN_SEED_DIR: seeds }), timeoutMs: 180_000 });
    const loaded = (await readFile(log, "utf8").catch(() => "")).split("\n").filter(Boolean);
    return { r, modules: modulesOfLoadedFiles(loaded) };
  }

  /** Every file below the machine's root, its bytes with the machine's own root written as `<root>`; timestamps of the boot index aside. */
  async function files(w: TmpWorld, dir = w.root, out: Record<string, string> = {}): Promise<Record<string, string>> {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const file = path.join(dir, entry.name);
      const rel = path.relative(w.root, file);
      if (entry.name === ".npm" || entry.name === "hooks" || entry.name.startsWith("modules-") || entry.name === "trusted-projects.json") continue;
      if (entry.isDirectory()) {
        out[`${rel}/`] = "";
        await files(w, file, out);
      } else if (entry.name.startsWith("boot-")) out[rel] = "(boot index)";
      else out[rel] = (await readFile(file, "utf8")).replaceAll(w.root, "<root>");
    }
    return out;
  }
  const same = (w: TmpWorld, text: string) => text.replaceAll(w.root, "<root>");

  beforeAll(async () => {
    await buildDist();
    reg = await useGlobalRegistry();
    // p1 has a hook module (the engine asks nothing for a seeded plugin: the image maker consented) and chooses features.
    await reg.publish({ name: p1, version: "1.0.0", packageJson: { type: "module", xcsh: { tools: "./t.js", hooks: "./hooks/guard.js" } }, files: { "t.js": toolSource(toolName(p1)), "hooks/guard.js": "export default function () {}\n" } });
    await reg.publish({ name: `${p2}-dep`, version: "1.0.0", files: { "index.js": "module.exports = 42;\n" } });
    await reg.publish({ name: p2, version: "1.0.0", packageJson: { type: "module", xcsh: { tools: "./t.js" }, dependencies: { [`${p2}-dep`]: "^1.0.0" } }, files: { "t.js": toolSource(toolName(p2)) } });
    ({ image, seed } = await seedImage(reg.url, "xcsh-seedfast-image-", { [p1]: "^1.0.0", [p2]: "1.0.0" }));
  }, LONG);
  afterAll(async () => {
    await reg?.dispose();
    await removeWorlds([image, ...worlds]);
  });

  describe("same answer as the engine", () => {
    for (const args of [["install", "--frozen", "--yes", "--offline"], ["--json", "install", "--frozen", "--yes", "--offline"], ["install"], ["--json", "install", "--offline"]]) {
      it(`${args.join(" ")}: stdout, exit code and every file written are the engine's, twice in a row, and no engine module is loaded`, async () => {
        const fast = await machine();
        const engine = await machine();
        for (const run of [1, 2]) {
          const a = await logged(fast, args, seed);
          const b = await logged(engine, [...args, "--yes", "--yes"], seed);
          expect(a.r.code, `${a.r.stdout}\n${a.r.stderr}`).toBe(0);
          expect(b.r.code, `${b.r.stdout}\n${b.r.stderr}`).toBe(0);
          expect(same(fast, a.r.stdout)).toBe(same(engine, b.r.stdout));
          expect(same(fast, a.r.stderr)).toBe(same(engine, b.r.stderr));
          expect(await files(fast)).toEqual(await files(engine));
          expect(a.modules, `run ${run}`).toContain(FAST);
          expect(a.modules.filter((m) => /\/src\/(teamset\/(resolve|restore)\.ts|plugins\/team\.ts|marketplace\/index\.ts|components\/consent\.ts|cli\/team-restore\.ts|cli\/commands\/install\.ts)$/.test(m) || m.includes("/node_modules/commander/"))).toEqual([]);
          expect(b.modules).toContain(ENGINE);
        }
        // The host files are there, the seed is used in place: nothing installed in the user's plugins folder.
        expect(await readdir(path.join(fast.cwd, ".xcsh", "plugins"))).toContain("installed_plugins.json");
        expect(await readdir(path.join(fast.home, ".xcsh", "plugins"))).toEqual([".xcsh-tools"]);
      }, LONG);
    }
  });

  describe("tried, then the engine: whatever the fast path cannot answer exactly", () => {
    /** The fast path was tried and stepped aside: the engine ran and gave `code`. */
    const handedOver = (run: { r: ProcessResult; modules: string[] }) => {
      expect(run.modules).toContain(FAST);
      expect(run.modules).toContain(ENGINE_CLI);
      return run.r;
    };

    it("a seed whose files changed after it was built: the engine's ESEED_INTEGRITY, nothing written", async () => {
      const tampered = path.join(image.root, "tampered-seed");
      await cp(seed, tampered, { recursive: true });
      await makeWritable(tampered);
      await writeFile(path.join(tampered, "plugins", "node_modules", p1, "t.js"), toolSource(toolName(p1), "// changed\n"));
      const w = await machine();
      const before = await files(w);
      const error = refusal(handedOver(await logged(w, ["--json", "install", "--frozen", "--yes", "--offline"], tampered)));
      expect(error.code).toBe("ESEED_INTEGRITY");
      expect(error.path).toBe(`/plugins/${p1.replace("/", "~1")}/tree`);
      expect(await files(w)).toEqual(before);
    }, LONG);

    it("a plugin no seed holds: the engine installs it from the registry (and --offline is its EOFFLINE naming it)", async () => {
      const partial = path.join(image.root, "partial-seed");
      const built = await runCli(["seed", partial, `${p1}@1.0.0`, "--yes"], { cwd: image.cwd, home: image.home, timeoutMs: 180_000 });
      expect(built.code, built.stderr).toBe(0);
      const w = await machine();
      const offline = refusal(handedOver(await logged(w, ["--json", "install", "--frozen", "--yes", "--offline"], partial)));
      expect(offline.code).toBe("EOFFLINE");
      expect(offline.message).toContain(`${p2}@1.0.0`);
      const r = handedOver(await logged(w, ["--json", "install", "--frozen", "--yes"], partial));
      expect(r.code, r.stderr).toBe(0);
      expect(r.json().npmInstalled).toEqual([`${p2}@1.0.0`]);
      expect(r.json().fromSeeds).toEqual([`${p1}@1.0.0 (${partial})`]);
    }, LONG);

    it("an untrusted project: the engine's EUNTRUSTED_PROJECT, nothing written", async () => {
      const w = await machine(false);
      const before = await files(w);
      expect(refusal(handedOver(await logged(w, ["--json", "install", "--frozen", "--yes", "--offline"], seed))).code).toBe("EUNTRUSTED_PROJECT");
      expect(await files(w)).toEqual(before);
    }, LONG);

    it("an organization policy: the engine enforces it (a forbidden plugin is its EPOLICY_FORBIDDEN), nothing written", async () => {
      const w = await machine();
      const policy = await w.write(path.join(w.root, "etc", "managed-settings.json"), { plugins: { forbidden: [p2] } });
      const before = await files(w);
      expect(refusal(handedOver(await logged(w, ["--json", "install", "--frozen", "--yes", "--offline"], seed, policy))).code).toBe("EPOLICY_FORBIDDEN");
      expect(await files(w)).toEqual(before);
    }, LONG);

    it("a settings file the CLI refuses: the engine's ECONFIG naming the field, nothing written", async () => {
      const w = await machine();
      const settings = await w.write(path.join(w.home, ".xcsh", "xcsh-tools.json"), { lockWaitMs: "soon" });
      const before = await files(w);
      const error = refusal(handedOver(await logged(w, ["--json", "install", "--frozen", "--yes", "--offline"], seed)));
      expect(error.code).toBe("ECONFIG");
      expect(error.file).toBe(settings);
      expect(await files(w)).toEqual(before);
    }, LONG);

        it("--frozen with a lock that is not in canonical bytes: the engine's ETEAM_FROZEN; without --frozen the engine rewrites it", async () => {
      const w = await machine();
      const lockFile = path.join(w.cwd, "xcsh-team.lock.json");
      await writeFile(lockFile, JSON.stringify(JSON.parse(await readFile(lockFile, "utf8"))));
      const before = await files(w);
      expect(refusal(handedOver(await logged(w, ["--json", "install", "--frozen", "--yes", "--offline"], seed))).code).toBe("ETEAM_FROZEN");
      expect(await files(w)).toEqual(before);
      const r = handedOver(await logged(w, ["--json", "install", "--yes", "--offline"], seed));
      expect(r.code, r.stderr).toBe(0);
      expect(r.json().lockChanged).toBe(true);
    }, LONG);

    // The ETEAM_GENERATED_TRACKED check runs in git children started before the seeds are hashed
    // (fast-seed.ts): in a work tree both children run, and what they find still decides.
    describe("a project in a git work tree", () => {
      /** The machine's project committed to a fresh repository, with `tracked` (project-relative files, written first) in it too. */
      const inRepo = async (tracked: string[] = []): Promise<TmpWorld> => {
        const w = await machine();
        const git = (args: string[]) => exec("git", args, { cwd: w.cwd, env: isolatedGitEnv(w.home) });
        await git(["init", "-q"]);
        for (const file of tracked) {
          await mkdir(path.dirname(path.join(w.cwd, file)), { recursive: true });
          await writeFile(path.join(w.cwd, file), "{}\n");
        }
        await git(["add", "-f", "xcsh-team.json", "xcsh-team.lock.json", ...tracked]);
        await git(["commit", "-q", "-m", "the project"]);
        return w;
      };

      it("outside any repository (an image built without .git): the fast path answers without git's module or a git process", async () => {
        const w = await machine();
        const a = await logged(w, ["--json", "install", "--frozen", "--yes", "--offline"], seed);
        expect(a.r.code, `${a.r.stdout}\n${a.r.stderr}`).toBe(0);
        expect(a.modules).toContain(FAST);
        expect(a.modules.filter((m) => /\/src\/core\/(git|process-group)\.ts$/.test(m))).toEqual([]);
      }, LONG);

      it("tracking none of the generated files: the fast path answers, with the engine's stdout and host files", async () => {
        const fast = await inRepo();
        const engine = await inRepo();
        const args = ["--json", "install", "--frozen", "--yes", "--offline"];
        const a = await logged(fast, args, seed);
        const b = await logged(engine, [...args, "--yes", "--yes"], seed);
        expect(a.r.code, `${a.r.stdout}\n${a.r.stderr}`).toBe(0);
        expect(b.r.code, `${b.r.stdout}\n${b.r.stderr}`).toBe(0);
        expect(a.modules).toContain(FAST);
        expect(a.modules).not.toContain(ENGINE_CLI);
        expect(b.modules).toContain(ENGINE);
        expect(same(fast, a.r.stdout)).toBe(same(engine, b.r.stdout));
        expect(await files(fast, path.join(fast.cwd, ".xcsh"))).toEqual(await files(engine, path.join(engine.cwd, ".xcsh")));
      }, LONG);

      for (const tracked of [".xcsh/plugins/installed_plugins.json", ".xcsh/plugin-overrides.json"]) {
        it(`${tracked} tracked: the engine's ETEAM_GENERATED_TRACKED naming it, nothing written`, async () => {
          const w = await inRepo([tracked]);
          const before = await files(w);
          const error = refusal(handedOver(await logged(w, ["--json", "install", "--frozen", "--yes", "--offline"], seed)));
          expect(error.code).toBe("ETEAM_GENERATED_TRACKED");
          expect(error.file).toBe(path.join(w.cwd, tracked));
          expect(await files(w)).toEqual(before);
        }, LONG);
      }
    });

    it("a seed that disagrees with the lock: the engine's ESEED_LOCK_MISMATCH; no lock at all: --offline is EOFFLINE", async () => {
      const w = await machine();
      const lockFile = path.join(w.cwd, "xcsh-team.lock.json");
      const lock = JSON.parse(await readFile(lockFile, "utf8"));
      lock.npm[p1].integrity = "sha512-AAAA";
      await writeFile(lockFile, `${JSON.stringify(lock, null, 2)}\n`);
      const mismatch = refusal(handedOver(await logged(w, ["--json", "install", "--yes", "--offline"], seed)));
      expect(mismatch.code).toBe("ESEED_LOCK_MISMATCH");
      expect(mismatch.path).toBe(`/plugins/${p1.replace("/", "~1")}/integrity`);
      await rm(lockFile);
      expect(refusal(handedOver(await logged(w, ["--json", "install", "--yes", "--offline"], seed))).code).toBe("EOFFLINE");
    }, LONG);
  });
});
