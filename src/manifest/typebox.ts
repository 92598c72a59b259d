/**
 * The part of TypeBox our own schemas use (state files, manifests, settings): every module of
 * ours imports TypeBox from here, never from the package.
 *
 * `npm run build` turns the compiled file into one self-contained module (scripts/bundle-typebox.mjs).
 * TypeBox ships some 270 small ES modules; loading them cost each command ~100 ms of its start
 * on Node 20, where one bundled file loads in ~10 ms. Node has no compile cache before 22, and no
 * library we use offers a single-file TypeBox.
 *
 * Plugin tools never see this copy: the module map hands them the real package
 * (host/import/module-map.ts; in the validation child, a bundled copy of the whole package that
 * only tools use, scripts/bundle-child.mjs), so their format and kind registries stay those of
 * the TypeBox they import. Ours only check documents with standard JSON Schema keywords; the kind
 * symbols are global (`Symbol.for`), so a schema built by either copy reads the same in the other.
 */
export { Type } from "@sinclair/typebox";
export type { Static, TSchema } from "@sinclair/typebox";
export { Value, ValueErrorType } from "@sinclair/typebox/value";
export type { ValueError } from "@sinclair/typebox/value";
