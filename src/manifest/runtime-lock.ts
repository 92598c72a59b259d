/**
 * `~/.xcsh/plugins/xcsh-plugins.lock.json`: the host's runtime state of npm plugins — which are
 * enabled, which features, and their settings (xcsh-host-formats §5.6). Not a resolver lockfile.
 */
import { Type, type Static } from "@sinclair/typebox";

export const RuntimePluginStateSchema = Type.Object({
  version: Type.Optional(Type.String()),
  /** `null`: the manifest's default features; `[]`: none; a list: exactly those. */
  enabledFeatures: Type.Optional(Type.Union([Type.Null(), Type.Array(Type.String())])),
  enabled: Type.Optional(Type.Boolean()),
});
export type RuntimePluginState = Static<typeof RuntimePluginStateSchema>;

export const RuntimeLockSchema = Type.Object({
  plugins: Type.Optional(Type.Record(Type.String(), RuntimePluginStateSchema)),
  settings: Type.Optional(Type.Record(Type.String(), Type.Record(Type.String(), Type.Unknown()))),
});
export type RuntimeLock = Static<typeof RuntimeLockSchema>;
