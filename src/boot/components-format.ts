/**
 * `boot-components.json`: the component inventory of installed plugins, one *view* per question
 * (home, cwd, trusted) — which plugins are installed there and what each brings (kinds, names,
 * descriptions, files, what executables run, loaded-by-xcsh marks, context costs, problems) —
 * with every input it was read from (components-inputs.ts). Tools are kept by file, as the scan
 * finds them; their names and costs come from the module records at answer time.
 *
 * Same version, generator and hand-written shape check as the other two files (format.ts): no
 * boot reads this one, but `listInstalledComponents` promises hosts an answer without the schema
 * or YAML libraries, so it is checked by hand as well. The check is of what the answer's readers
 * rely on (strings where paths and names are, arrays where lists are); the plugin rows are
 * otherwise passed through as the scan produced them.
 */
import type { InstalledPluginComponents } from "../components/installed.js";
import { COMPONENT_KINDS } from "../components/types.js";
import type { InputFingerprint } from "./fingerprint.js";
import { BOOT_INDEX_VERSION, arrayOf, object, oneOf, readChecked, type Shape } from "./format.js";

/** What makes two inventories the same question. */
export interface ComponentViewKey {
  home: string;
  cwd: string;
  /** Whether the project's own installs were read (workspace trust). */
  trusted: boolean;
}

/** One inventory with its inputs. */
export interface ComponentView {
  key: ComponentViewKey;
  builtAt: string;
  inputs: InputFingerprint[];
  plugins: InstalledPluginComponents[];
}

/** The whole file. */
export interface ComponentIndex {
  version: typeof BOOT_INDEX_VERSION;
  generator: string;
  writtenAt: string;
  views: ComponentView[];
}

const numberOrNull: Shape = (value) => (value === null || typeof value === "number" ? undefined : { keys: [], expected: "expected number or null" });
const issue = object({ file: "string", path: "string", code: "string", message: "string" }, { hint: "string", forUser: "string", expected: "string", found: "string" });
const component = object(
  { kind: oneOf(...COMPONENT_KINDS), name: "string", file: "string", loadedByXcsh: "boolean", cost: object({ alwaysOn: numberOrNull, onInvoke: "number" }) },
  {
    declaredName: "string",
    filedAs: oneOf(...COMPONENT_KINDS),
    description: "string",
    pointer: "string",
    note: "string",
    piOnly: "boolean",
    exec: object({ command: "string", args: arrayOf("string"), env: arrayOf("string") }, { cwd: "string", shell: "boolean" }),
    url: "string",
    headers: arrayOf("string"),
    transport: "string",
    event: "string",
    matcher: "string",
    hookType: "string",
    timeout: "number",
  },
);
const plugin = object(
  {
    id: "string",
    name: "string",
    rootKind: oneOf("xcsh-marketplace", "claude-cache", "npm"),
    scope: oneOf("user", "project"),
    enabled: "boolean",
    root: "string",
    components: arrayOf(component),
    errors: arrayOf(issue),
    warnings: arrayOf(issue),
    cost: object({ alwaysOn: "number", alwaysOnForXcsh: "number", onInvoke: "number", unknown: "number" }),
  },
  { version: "string", problem: object({ code: "string", message: "string" }) },
);
const view = object({
  key: object({ home: "string", cwd: "string", trusted: "boolean" }),
  builtAt: "string",
  inputs: arrayOf(object({ path: "string", kind: oneOf("stat", "lstat"), sig: "string" }, { sha: "string" })),
  plugins: arrayOf(plugin),
});
const fileShape = object({ version: "number", generator: "string", writtenAt: "string", views: arrayOf(view) });

/** Result of reading the file: the inventory, or why there is none. */
export type ComponentIndexRead = { status: "ok"; index: ComponentIndex } | { status: "missing" | "corrupt" | "unknown-version" | "other-generator"; reason: string };

/** Read and check the file; never throws. */
export function readComponentIndex(file: string, generator: string): ComponentIndexRead {
  const read = readChecked(file, fileShape, generator);
  return read.status === "ok" ? { status: "ok", index: read.raw as unknown as ComponentIndex } : read;
}

/** The file's text. */
export function serializeComponentIndex(index: ComponentIndex): string {
  return `${JSON.stringify(index)}\n`;
}

/** Two keys ask the same question. */
export function sameComponentKey(a: ComponentViewKey, b: ComponentViewKey): boolean {
  return a.home === b.home && a.cwd === b.cwd && a.trusted === b.trusted;
}
