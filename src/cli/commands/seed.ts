/**
 * `xcsh-tools seed <dir> [spec...] [--from <project>]`: build a read-only plugin seed at image
 * build time (docs/fleets.md, docs/design/fleets.md). The plugins are installed by `install`'s own
 * engine into `<dir>.building-<pid>/plugins` (consent as `install`: `--yes`, else a question on
 * a terminal, `EUNCONFIRMED` without one), from the specs given or, with `--from`, from the npm
 * entries of the project's `xcsh-team.lock.json` at their locked versions (a trusted project only;
 * the installed integrity must be the lock's). Then `xcsh-seed.json` is written, every file made
 * read-only, and the folder renamed to `<dir>`: a failed build leaves no seed behind.
 */
import { createHash } from "node:crypto";
import { mkdir, readFile, readdir, rename, rm } from "node:fs/promises";
import path from "node:path";
import type { Command } from "commander";
import { XcshToolsError } from "../../core/errors.js";
import { projectFolder, teamPaths } from "../../core/paths.js";
import { isProjectTrustedByUser, trustWorldOf, untrustedProjectError } from "../../core/trust.js";
import { pointerSegment } from "../../manifest/result.js";
import type { CommandContext, CommandModule } from "../context.js";

interface SeedFlags {
  from?: string | boolean;
  yes?: boolean;
  allowScripts?: boolean;
}

export const register: CommandModule["register"] = (program, getContext) => {
  program
    .command("seed <dir> [spec...]")
    .description("build a read-only plugin seed for containers and CI (XCSH_PLUGIN_SEED_DIR): from a project's xcsh-team.lock.json (--from) or from npm specs")
    .option("--from [project]", "seed the npm plugins of this project's lock (default: the current project)")
    .option("--allow-scripts", "run the packages' install scripts (off by default)")
    .option("-y, --yes", "accept what the plugins run without asking (hook and extension modules, install scripts with --allow-scripts)")
    .action(async (dir: string, specs: string[], flags: SeedFlags, command: Command) => {
      await buildSeed(getContext(command), path.resolve(getContext(command).cwd, dir), specs, flags);
    });
};

async function buildSeed(ctx: CommandContext, target: string, specs: string[], flags: SeedFlags): Promise<void> {
  const fromLock = flags.from !== undefined && flags.from !== false;
  if (fromLock === (specs.length > 0)) {
    throw new XcshToolsError("EUSAGE", fromLock ? "seed takes either --from <project> or specs, not both" : "seed needs specs or --from <project>", { hint: "xcsh-tools seed /opt/xcsh-seed --from . --yes, or xcsh-tools seed /opt/xcsh-seed @acme/xcsh-search@1.4.2 --yes", exitCode: 2 });
  }
  const locked = fromLock ? await lockedNpm(ctx, typeof flags.from === "string" ? path.resolve(ctx.cwd, flags.from) : ctx.cwd) : undefined;
  const installSpecsList = locked ? [...locked.plugins].map(([name, entry]) => `${name}@${entry.version}`) : specs;
  if (installSpecsList.length === 0) throw new XcshToolsError("EUSAGE", `${locked!.file} locks no npm plugin: nothing to seed`, { file: locked!.file, hint: "Marketplace plugins are not seeded yet (docs/fleets.md); declare npm plugins, or name specs.", exitCode: 2 });
  // The organization policy before the target is looked at, a folder made or a request sent (the install below judges each spec again).
  await assertSpecsAllowed(ctx, installSpecsList);
  const entries = await readdir(target).catch((error: NodeJS.ErrnoException) => (error.code === "ENOENT" ? [] : Promise.reject(error)));
  if (entries.length > 0) {
    throw new XcshToolsError("ESEED_TARGET", `${target} is not empty; a seed is built whole into an empty or missing folder`, { file: target, hint: `Build it elsewhere, or remove ${target} first (a seed is never changed in place).` });
  }
  const building = `${target}.building-${process.pid}`;
  await rm(building, { recursive: true, force: true });
  await mkdir(path.join(building, "plugins"), { recursive: true });
  try {
    // The installer sees only the seed being built: its own root there, no other seed.
    const roots = { home: ctx.roots.home, xcshHome: path.join(building, "plugins", ".xcsh-tools", "home"), pluginsDir: path.join(building, "plugins"), seedDirs: [] };
    const { installSpecs } = await import("./install.js");
    // The install's own JSON document is not this command's (one document per `--json` run).
    const output = ctx.output.json ? { ...ctx.output, result: () => undefined } : ctx.output;
    await installSpecs({ ...ctx, roots, output }, installSpecsList, { yes: Boolean(flags.yes), allowScripts: Boolean(flags.allowScripts) });
    const { top: installed, all } = await installedTree(path.join(building, "plugins"));
    if (locked) {
      // The plugin and its whole closure as the lock has them (name@version → integrity), else nothing is seeded.
      for (const [name, entry] of locked.plugins) {
        const got = installed.get(name);
        const wrong = got?.integrity !== entry.integrity ? { at: "integrity", expected: entry.integrity, got: got?.integrity || "none" } : undefined;
        const dep = Object.entries(entry.dependencies).find(([key, integrity]) => !all.get(key)?.has(integrity));
        const found = wrong ?? (dep ? { at: `dependencies/${pointerSegment(dep[0])}`, expected: dep[1], got: [...(all.get(dep[0]) ?? [])].join(", ") || "not installed" } : undefined);
        if (!found) continue;
        throw new XcshToolsError("ESEED_LOCK_MISMATCH", `${name}@${entry.version} as the registry serves it now is not what ${locked.file} /npm/${pointerSegment(name)}/${found.at} locks: expected ${found.expected}, got ${found.got}`, {
          file: locked.file,
          path: `/npm/${pointerSegment(name)}/${found.at}`,
          hint: "The registry serves other bytes (or another dependency) than when the lock was written: check the registry (.npmrc), or update the lock (xcsh-tools update --scope project) and seed again.",
        });
      }
    }
    const plugins = new Map([...installed].filter(([name]) => (locked ? locked.plugins.has(name) : true)));
    const origin = locked ? { kind: "lock" as const, file: path.basename(locked.file), sha256: locked.sha256 } : { kind: "specs" as const, specs };
    const { finishSeed } = await import("../../teamset/seed.js");
    const { bootIndexGenerator } = await import("../../boot/index.js");
    await rm(path.join(building, "plugins", ".xcsh-tools"), { recursive: true, force: true });
    const manifest = await finishSeed(building, origin, plugins, bootIndexGenerator());
    await rename(building, target);
    if (ctx.output.json) return ctx.output.result({ ok: true, seed: target, ...manifest });
    ctx.output.line(`Seeded ${Object.entries(manifest.plugins).map(([name, p]) => `${name}@${p.version}`).join(", ")} into ${target} (read-only).`);
    ctx.output.line(`Use it with XCSH_PLUGIN_SEED_DIR=${target}`);
  } catch (error) {
    await (await import("../../teamset/seed.js")).makeSeedWritable(building);
    await rm(building, { recursive: true, force: true });
    throw error;
  }
}

/** `EPOLICY_*` for the first spec the organization policy refuses (source, or a forbidden name). */
async function assertSpecsAllowed(ctx: CommandContext, specs: readonly string[]): Promise<void> {
  const [{ parseInstallSpec }, { assertSpecAllowed }, { npmClient }] = await Promise.all([import("../../plugins/spec.js"), import("../../plugins/resolve.js"), import("../plugin-command.js")]);
  const client = await npmClient(ctx);
  for (const spec of specs) assertSpecAllowed(parseInstallSpec(spec, ctx.cwd), client, ctx.cwd, "seed");
}

/** The npm entries of the project's lock (a trusted project: its lock decides what code goes into the image). */
async function lockedNpm(ctx: CommandContext, cwd: string): Promise<{ file: string; sha256: string; plugins: Map<string, { version: string; integrity: string; dependencies: Record<string, string> }> }> {
  const root = projectFolder(cwd, ctx.roots);
  if (!isProjectTrustedByUser(root, trustWorldOf(ctx.roots))) throw untrustedProjectError(root, "seed the project's plugin set");
  const file = teamPaths(root, ctx.roots.configDirName).lock;
  const text = await readFile(file, "utf8").catch(() => {
    throw new XcshToolsError("ENOT_FOUND", `${file} does not exist: the project's set is not locked`, { file, hint: "Lock it first: xcsh-tools install (in the project), commit xcsh-team.lock.json, then seed." });
  });
  const { parseLock } = await import("../../teamset/index.js");
  const lock = parseLock(text, file);
  const plugins = new Map(Object.entries(lock.npm).map(([name, entry]) => [name, { version: entry.version, integrity: entry.integrity, dependencies: entry.dependencies }]));
  return { file, sha256: createHash("sha256").update(text).digest("hex"), plugins };
}

/**
 * What the installer put in a plugins folder, from its package-lock.json: each top-level plugin's
 * version and integrity, and every package of the tree as `name@version` → its integrities (a
 * team lock's closure keys).
 */
async function installedTree(pluginsDir: string): Promise<{ top: Map<string, { version: string; integrity: string }>; all: Map<string, Set<string>> }> {
  const pkg = JSON.parse(await readFile(path.join(pluginsDir, "package.json"), "utf8")) as { dependencies?: Record<string, string> };
  const lock = JSON.parse(await readFile(path.join(pluginsDir, "package-lock.json"), "utf8")) as { packages?: Record<string, { version?: string; integrity?: string }> };
  const top = new Map<string, { version: string; integrity: string }>();
  for (const name of Object.keys(pkg.dependencies ?? {})) {
    const entry = lock.packages?.[`node_modules/${name}`];
    top.set(name, { version: entry?.version ?? "", integrity: entry?.integrity ?? "" });
  }
  const all = new Map<string, Set<string>>();
  for (const [location, entry] of Object.entries(lock.packages ?? {})) {
    const at = location.lastIndexOf("node_modules/");
    if (at < 0 || !entry.version || !entry.integrity) continue;
    const key = `${location.slice(at + "node_modules/".length)}@${entry.version}`;
    all.set(key, (all.get(key) ?? new Set()).add(entry.integrity));
  }
  return { top, all };
}
