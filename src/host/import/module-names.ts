/**
 * The names the module map gives a default instance (module-map.ts), in a module of their own:
 * code that only needs the names (the install's check of which names a plugin tree holds) must
 * not load TypeBox, as module-map.ts does.
 */
export const DEFAULT_MODULE_NAMES = ["@sinclair/typebox", "xcsh-tools"] as const;
