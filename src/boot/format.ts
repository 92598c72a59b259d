/**
 * The boot index file (`<xcshHome>/plugins/.xcsh-tools/boot-index.json`): ours alone, versioned,
 * written atomically, and disposable. Reading it never fails a caller: a missing, unreadable,
 * corrupt or unknown-version file reads as "no index" with a reason (`readBootIndex`), and the
 * caller scans instead and writes a new one.
 *
 *     {version: 1, generator: "xcsh-tools@x.y.z", writtenAt,
 *      views:   [{key: {home, cwd, configuredPaths, providers}, builtAt, inputs, paths, errors}],
 *      modules: {<real path of a tool entry>: {file, sig, sha, runtime, failure? | tools}}}
 *
 * A view is one discovery result (the paths handed to the loader and the discovery errors) with
 * every input it was computed from (fingerprint.ts). A module record is what importing one tool
 * entry and calling its factory produced, captured in the validation child: its tools' names,
 * labels, descriptions and parameter schemas, or the failure.
 */
import { readFile } from "node:fs/promises";
import { Type, type Static } from "@sinclair/typebox";
import { checkSchema } from "../manifest/result.js";
import type { ToolLoadError, ToolSource } from "../host/types.js";
import type { InputFingerprint } from "./fingerprint.js";

export const BOOT_INDEX_VERSION = 1;

const SourceSchema = Type.Object({
  provider: Type.String(),
  providerName: Type.String(),
  level: Type.Union([Type.Literal("user"), Type.Literal("project")]),
  plugin: Type.Optional(Type.String()),
});

const InputSchema = Type.Object({
  path: Type.String(),
  kind: Type.Union([Type.Literal("stat"), Type.Literal("lstat")]),
  sig: Type.String(),
  sha: Type.Optional(Type.String()),
});

const ViewKeySchema = Type.Object({
  home: Type.String(),
  cwd: Type.String(),
  configuredPaths: Type.Array(Type.String()),
  providers: Type.Array(Type.String()),
});

const ViewSchema = Type.Object({
  key: ViewKeySchema,
  builtAt: Type.String(),
  inputs: Type.Array(InputSchema),
  paths: Type.Array(Type.Object({ path: Type.String(), source: SourceSchema })),
  errors: Type.Array(Type.Object({ path: Type.String(), error: Type.String(), code: Type.String() })),
});

const ToolRecordSchema = Type.Object({
  index: Type.Optional(Type.Number()),
  name: Type.Optional(Type.String()),
  label: Type.Optional(Type.Unknown()),
  description: Type.Optional(Type.Unknown()),
  parameters: Type.Optional(Type.Unknown()),
  problems: Type.Array(Type.Object({ code: Type.String(), field: Type.String(), message: Type.String() })),
});

const ModuleRecordSchema = Type.Object({
  file: Type.String(),
  sig: Type.String(),
  sha: Type.Optional(Type.String()),
  runtime: Type.String(),
  failure: Type.Optional(Type.Object({ code: Type.String(), message: Type.String() })),
  tools: Type.Array(ToolRecordSchema),
});

export const BootIndexSchema = Type.Object({
  version: Type.Literal(BOOT_INDEX_VERSION),
  generator: Type.String(),
  writtenAt: Type.String(),
  views: Type.Array(ViewSchema),
  modules: Type.Record(Type.String(), ModuleRecordSchema),
});

/** What makes two discovery runs the same question. */
export type ViewKey = Static<typeof ViewKeySchema>;
/** One tool of a module record. */
export type ToolRecord = Static<typeof ToolRecordSchema>;
/** What one tool entry produced when it was validated. */
export type ModuleRecord = Static<typeof ModuleRecordSchema>;

/** One discovery result with its inputs. */
export interface BootView {
  key: ViewKey;
  builtAt: string;
  inputs: InputFingerprint[];
  paths: { path: string; source: ToolSource }[];
  errors: ToolLoadError[];
}

/** The whole file. */
export interface BootIndex {
  version: typeof BOOT_INDEX_VERSION;
  generator: string;
  writtenAt: string;
  views: BootView[];
  modules: Record<string, ModuleRecord>;
}

/** Result of reading the file: an index, or why there is none. */
export type BootIndexRead =
  | { status: "ok"; index: BootIndex }
  | { status: "missing" | "corrupt" | "unknown-version" | "other-generator"; reason: string };

/** Read and check the index at `file`; never throws. */
export async function readBootIndex(file: string, generator: string): Promise<BootIndexRead> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException)?.code;
    if (code === "ENOENT" || code === "ENOTDIR") return { status: "missing", reason: `${file} does not exist` };
    return { status: "corrupt", reason: `${file} cannot be read: ${(error as Error)?.message ?? String(error)}` };
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    return { status: "corrupt", reason: `${file} is not JSON: ${(error as Error).message}` };
  }
  const version = (raw as { version?: unknown } | null)?.version;
  if (version !== BOOT_INDEX_VERSION) {
    return { status: "unknown-version", reason: `${file} has version ${JSON.stringify(version)}; this xcsh-tools reads version ${BOOT_INDEX_VERSION}` };
  }
  const checked = checkSchema(BootIndexSchema, raw);
  if (!checked.ok) {
    const first = checked.issues[0];
    return { status: "corrupt", reason: `${file} has the wrong shape at ${first?.path || "/"}: ${first?.message ?? "invalid"}` };
  }
  const index = checked.value as unknown as BootIndex;
  if (index.generator !== generator) {
    return { status: "other-generator", reason: `${file} was written by ${index.generator}, not ${generator}` };
  }
  return { status: "ok", index };
}

/** Two view keys ask the same question. */
export function sameKey(a: ViewKey, b: ViewKey): boolean {
  return (
    a.home === b.home &&
    a.cwd === b.cwd &&
    a.configuredPaths.length === b.configuredPaths.length &&
    a.configuredPaths.every((p, i) => p === b.configuredPaths[i]) &&
    a.providers.length === b.providers.length &&
    a.providers.every((p, i) => p === b.providers[i])
  );
}
