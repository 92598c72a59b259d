/**
 * `<project>/.xcsh/plugin-overrides.json`: a project's overrides of npm plugin state
 * (xcsh-host-formats §5.7). The project wins over the user's runtime state.
 */
import { Type, type Static } from "@sinclair/typebox";

export const PluginOverridesSchema = Type.Object({
  disabled: Type.Optional(Type.Array(Type.String())),
  features: Type.Optional(Type.Record(Type.String(), Type.Array(Type.String()))),
  settings: Type.Optional(Type.Record(Type.String(), Type.Record(Type.String(), Type.Unknown()))),
});
export type PluginOverrides = Static<typeof PluginOverridesSchema>;
