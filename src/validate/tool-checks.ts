/**
 * Checks of the tools the child described: the loader's shape problems (reported with the
 * loader's codes, so validate and a host say the same thing), a deeper look at `parameters`,
 * and the name rules that need the whole run: duplicates within a plugin (the host would load
 * the first and reject the second), conflicts with built-ins (the host rejects the tool), and
 * names shared between plugins of one marketplace (they conflict once both are installed).
 */
import { HOST_EXPORTS_HINT } from "../host/host-exports.js";
import { suggestToolName } from "../manifest/names.js";
import { isRecord } from "../manifest/result.js";
import type { ModuleOutcome } from "./module-check.js";
import type { PendingModule, ValidateRun } from "./run.js";

const FAILURE_HINTS: Record<string, string> = {
  EIMPORT: "Fix the error above; run the module with node or bun to see the full stack. Missing packages must be dependencies of the plugin.",
  EIMPORT_TIMEOUT: "Look for a top-level await that never settles in the module or its imports.",
  EIMPORT_OUTSIDE: "Add the package to the plugin's dependencies (its own node_modules): packages above the plugin's folder are never used.",
  ENOT_A_FACTORY: "Export the factory: `export default function (api) { return { name, label, description, parameters, execute } }`.",
  EFACTORY_THROW: "The factory runs at every host start: keep it free of work that can fail (network, files); do that in execute.",
  EFACTORY_TIMEOUT: "Return the tool without waiting for servers or user input; do slow work lazily in execute.",
  EFACTORY_RESULT: "Return a tool object or an array of tool objects from the factory.",
  EHOST_EXPORTS: HOST_EXPORTS_HINT,
  EMODULE_TIMEOUT: "Remove the infinite loop or blocking work from the module's top level and the factory.",
  EMODULE_EXIT: "Never call process.exit (or crash the runtime, or allocate without bound) in a tool; throw an error instead.",
  EVALIDATE_TIMEOUT: "Raise --timeout, or validate fewer modules at a time.",
  ECHILD: "Run again with --debug; this is probably a bug of xcsh-tools.",
};

/** Deeper checks of an object schema: `properties` an object of schemas, `required` names them. */
export function parametersProblems(parameters: unknown): { path: string; message: string }[] {
  if (!isRecord(parameters)) return [];
  const out: { path: string; message: string }[] = [];
  const props = parameters.properties;
  if (props !== undefined && !isRecord(props)) out.push({ path: "/properties", message: '"properties" must be an object of property schemas' });
  if (isRecord(props)) {
    for (const [key, schema] of Object.entries(props)) {
      if (!isRecord(schema)) out.push({ path: `/properties/${key}`, message: `property "${key}" must be a schema object, found ${schema === null ? "null" : typeof schema}` });
    }
  }
  const required = parameters.required;
  if (required !== undefined) {
    if (!Array.isArray(required) || required.some((r) => typeof r !== "string")) out.push({ path: "/required", message: '"required" must be an array of property names' });
    else for (const name of required) if (!isRecord(props) || !(name in props)) out.push({ path: "/required", message: `"required" lists "${name}", which is not in "properties"` });
  }
  return out;
}

/** Record the findings of the module outcomes; returns nothing, fills `run`. */
export function checkOutcomes(run: ValidateRun, modules: readonly PendingModule[], outcomes: readonly ModuleOutcome[], builtins: ReadonlySet<string>): { name: string; file: string; plugin?: string }[] {
  const tools: { name: string; file: string; plugin?: string }[] = [];
  const byUnit = new Map<string, Map<string, string>>();
  const byName = new Map<string, { unit: string; file: string }>();
  outcomes.forEach((outcome, i) => {
    const { file, unit } = modules[i]!;
    if (outcome.failure) {
      run.error(file, { path: "", code: outcome.failure.code, message: outcome.failure.message, hint: FAILURE_HINTS[outcome.failure.code] ?? "See the message." });
      return;
    }
    if (outcome.tools.length === 0) run.warn(file, { path: "", code: "ENO_TOOLS", message: "the factory returned an empty array: the module adds no tool", hint: "Return at least one tool, or remove the module." });
    for (const tool of outcome.tools) {
      const at = `/tools/${tool.index ?? 0}`;
      for (const problem of tool.problems) {
        const where = problem.field === "(tool)" ? at : `${at}/${problem.field}`;
        const hint =
          problem.code === "ETOOL_NAME" && tool.name !== undefined
            ? `Rename the tool, e.g. "${suggestToolName(tool.name)}".`
            : problem.field === "parameters"
              ? "Use api.typebox.Type.Object({...}) or {type: \"object\", properties: {...}}."
              : `Set "${problem.field}" on the tool object.`;
        run.error(file, { path: where, code: problem.code, message: problem.message, hint });
      }
      if (tool.problems.length > 0) continue;
      if (tool.staticProblem) {
        const where = tool.staticProblem.field.startsWith("(") ? at : `${at}/${tool.staticProblem.field}`;
        run.error(file, { path: where, code: "ESTATIC_TOOLS", message: `the plugin declares "staticTools" but ${tool.staticProblem.message}`, hint: "Build name, label, description and parameters from constants only (no cwd, environment, settings or time), or remove \"staticTools\" from the manifest (docs/lazy-tools.md)." });
      }
      for (const p of parametersProblems(tool.parameters)) {
        run.error(file, { path: `${at}/parameters${p.path}`, code: "EPARAMETERS", message: p.message, hint: "Build parameters with TypeBox (api.typebox.Type.Object) to get a consistent schema." });
      }
      const name = tool.name!;
      if (typeof tool.label !== "string" || tool.label === "") {
        run.warn(file, { path: `${at}/label`, code: "ENO_LABEL", message: `tool "${name}" has no label; the host shows its name instead`, hint: "Add a short human label." });
      }
      if (builtins.has(name)) {
        run.error(file, { path: `${at}/name`, code: "ECONFLICT_BUILTIN", message: `tool name "${name}" is a built-in tool name: the host rejects this tool`, hint: `Rename it, e.g. "${unit.replace(/[^a-zA-Z0-9_]+/g, "_").replace(/^_+/, "")}_${name}".` });
        continue;
      }
      const unitNames = byUnit.get(unit) ?? new Map<string, string>();
      byUnit.set(unit, unitNames);
      const first = unitNames.get(name);
      if (first !== undefined) {
        run.error(file, { path: `${at}/name`, code: "EDUPLICATE_TOOL", message: `tool name "${name}" is already used by ${first}: the host would load only the first`, hint: "Give every tool of a plugin its own name." });
        continue;
      }
      unitNames.set(name, file);
      const other = byName.get(name);
      if (other && other.unit !== unit) {
        run.warn(file, { path: `${at}/name`, code: "ECONFLICT", message: `tool name "${name}" is also used by ${other.unit} (${other.file}): installing both makes one of them fail`, hint: "Prefix tool names with the plugin's name." });
      } else byName.set(name, { unit, file });
      tools.push({ name, file, ...(unit !== file ? { plugin: unit } : {}) });
    }
  });
  return tools;
}
