/**
 * The part of TypeBox our own schemas use (state files, manifests, settings): every module of
 * ours imports TypeBox from here, never from the package.
 *
 * Plugin tools get the package through the module map (host/import/module-map.ts), the same
 * instance in the process; ours only check documents with standard JSON Schema keywords.
 */
export { Type } from "@sinclair/typebox";
export type { Static, TSchema } from "@sinclair/typebox";
export { Value, ValueErrorType } from "@sinclair/typebox/value";
export type { ValueError } from "@sinclair/typebox/value";
