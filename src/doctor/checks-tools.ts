/**
 * Name conflicts, as the host would meet them at boot: discovery finds every tool path in load
 * order (src/discovery, the same code the host calls); what each module exports is taken from its
 * boot-index record when that record says it loaded and was made from the bytes the file holds
 * now (boot/module-records.ts), and every other module is loaded in ONE child process by
 * validate's module checker (plugin code never runs in doctor's own process, and its transpile
 * cache goes to a temporary folder: doctor writes nothing in the xcsh root). Then the host's
 * rules are applied to the names: a tool named like a built-in is rejected, and of two tools with
 * one name only the first loaded survives.
 */
import { mkdtemp } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { prepareModules, type PreparedEntry } from "../boot/module-records.js";
import { loadIndex } from "../boot/store.js";
import { worldOf } from "../boot/world.js";
import { removeTree } from "../core/atomic-fs.js";
import { discoverToolPaths } from "../discovery/index.js";
import { DEFAULT_BUILTIN_TOOL_NAMES } from "../host/builtins.js";
import { ToolClaims, describeSource } from "../host/tool-claims.js";
import type { ProviderId } from "../core/host-options.js";
import { checkModules } from "../validate/module-check.js";
import { failedCheck } from "./checks-state.js";
import { AreaFindings, type DoctorWorld } from "./world.js";

/** Providers whose problems other areas already report (plugins, marketplace). */
const COVERED: readonly string[] = ["npm", "xcsh-plugins"];

/** Conflicts between tools, and with built-ins. */
export async function checkConflicts(world: DoctorWorld, options: { builtins: readonly string[]; disabledProviders: readonly string[] }): Promise<AreaFindings> {
  const area = new AreaFindings("conflicts");
  const found = await discoverToolPaths([], world.cwd, {
    ...world.roots,
    env: world.env,
    disabledProviders: options.disabledProviders as ProviderId[],
  });
  for (const error of found.errors) {
    if (error.source && COVERED.includes(error.source.provider)) continue;
    area.problem(`discovery:${error.code}:${error.path}`, "warn", `${describeSource(error.source)}: ${error.error}`, {
      hint: "Fix or remove the file named; the host skips it.",
      manual: "the file belongs to you or to another tool",
    });
  }
  const { index } = await loadIndex(worldOf({ ...world.roots, env: world.env }), true);
  // One entry per module, the first: the loader takes a module once, by its real path (a
  // symlink beside it is the same module).
  const byKey = new Map<string, PreparedEntry>();
  for (const m of await prepareModules({ paths: found.paths, inputs: [] }, index)) if (!byKey.has(m.key)) byKey.set(m.key, m);
  const prepared = [...byKey.values()];
  if (prepared.length === 0) {
    if (area.healthy) area.ok("conflicts", "no custom tools installed");
    return area;
  }
  // A recorded failure is checked again: it may be the runtime's or the moment's, not the bytes'.
  const unknown = prepared.filter((m) => !m.record || m.record.failure);
  let checked: Awaited<ReturnType<typeof checkModules>> = [];
  // With every module recorded (the usual case after an install or a host start), no checker runs.
  const scratch = unknown.length > 0 ? await mkdtemp(path.join(os.tmpdir(), "xcsh-tools-doctor-")) : undefined;
  if (scratch) {
    try {
      checked = await checkModules(unknown.map((m) => m.file), {
        cwd: world.cwd,
        home: world.roots.home,
        xcshHome: scratch,
        cacheDir: path.join(scratch, "transpile"),
        ...(world.moduleTimeoutMs ? { moduleTimeoutMs: world.moduleTimeoutMs } : {}),
      });
    } catch (error) {
      area.problem("conflicts", "warn", `could not load the tools to compare their names: ${failedCheck(error)}`, { hint: "Run `xcsh-tools tools` to see what the host loads.", manual: "the module checker did not run" });
      return area;
    } finally {
      await removeTree(scratch).catch(() => undefined);
    }
  }
  const checkedOf = new Map(unknown.map((m, i) => [m, checked[i]!]));
  const outcomes = prepared.map((m) => checkedOf.get(m) ?? m.record!);
  // The loader's own rules (host/tool-claims.ts): a built-in's name, or first wins.
  const claims = new ToolClaims([...DEFAULT_BUILTIN_TOOL_NAMES, ...options.builtins]);
  let tools = 0;
  outcomes.forEach((outcome, i) => {
    const { entry } = prepared[i]!;
    const { source } = entry;
    if (outcome.failure) {
      area.problem(`tools:${outcome.failure.code}:${outcome.file}`, "error", `${outcome.file} of ${describeSource(source)} fails to load: ${outcome.failure.message} (${outcome.failure.code})`, {
        hint: `See every problem with \`xcsh-tools validate ${outcome.file}\`.`,
        manual: "the module itself is broken",
      });
      return;
    }
    // A tool with shape problems is validate's to report; its name claims nothing here.
    for (const tool of outcome.tools.filter((t) => typeof t.name === "string" && t.problems.length === 0)) {
      tools += 1;
      const name = tool.name!;
      if (claims.accept(entry, outcome.file, tool.index, name, [])) continue;
      const claim = claims.errors.at(-1)!.conflictsWith!;
      if ("builtIn" in claim) {
        area.problem(`conflict:builtin:${name}:${outcome.file}`, "error", `tool "${name}" of ${describeSource(source)} (${outcome.file}) has the name of a built-in tool: the host rejects it`, {
          hint: `Rename the tool in its ${source?.plugin ? "plugin" : "file"}, or remove it.`,
          manual: "renaming a tool is its author's change",
        });
      } else {
        area.problem(`conflict:tool:${name}:${outcome.file}`, "error", `tool "${name}" of ${describeSource(source)} (${outcome.file}) has the same name as the one of ${describeSource(claim.source)} (${claim.path}), which loads first: the host rejects the second`, {
          hint: `Keep one: uninstall or disable one of the two${source?.plugin ? ` (e.g. \`xcsh-tools uninstall ${source.plugin}\`)` : ""}.`,
          manual: "which of the two you want is your choice",
        });
      }
    }
  });
  if (area.healthy) area.ok("conflicts", `${tools} tool${tools === 1 ? "" : "s"} from ${prepared.length} module${prepared.length === 1 ? "" : "s"}: no name conflicts`);
  return area;
}
