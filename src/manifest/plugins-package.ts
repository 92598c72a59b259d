/**
 * `~/.xcsh/plugins/package.json`: the npm project that holds installed plugins. Its
 * `dependencies` are the source of truth for which plugins exist (xcsh-host-formats §5.5).
 */
import { Type, type Static } from "@sinclair/typebox";

export const PluginsPackageJsonSchema = Type.Object({
  name: Type.Optional(Type.String()),
  private: Type.Optional(Type.Boolean()),
  dependencies: Type.Optional(Type.Record(Type.String(), Type.String())),
});
export type PluginsPackageJson = Static<typeof PluginsPackageJsonSchema>;

/** The file the host creates when none exists. */
export const EMPTY_PLUGINS_PACKAGE_JSON: PluginsPackageJson = { name: "xcsh-plugins", private: true, dependencies: {} };
