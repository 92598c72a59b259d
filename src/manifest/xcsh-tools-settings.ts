/**
 * xcsh-tools' own settings (not a plugin's settings): the schema of the merged result and of one
 * settings file, where every field is optional. Loading and layering live in `core/config.ts`.
 */
import { Type, type Static } from "./typebox.js";
import { PROVIDER_IDS } from "../core/host-options.js";

const Milliseconds = Type.Integer({ minimum: 0, description: "milliseconds, a whole number >= 0" });

export const SettingsTimeoutsSchema = Type.Object({
  /** How long a tool factory may run at boot. */
  factoryMs: Milliseconds,
  /** How long a tool module import may take at boot. */
  importMs: Milliseconds,
  /** How long one git operation (marketplace clone/fetch) may take. */
  gitMs: Milliseconds,
  /** How long one registry or HTTP fetch may take. */
  fetchMs: Milliseconds,
});

const Count = Type.Integer({ minimum: 1, description: "a whole number >= 1" });

/** Limits every package tarball is checked against while it streams, before anything is extracted. */
export const SettingsLimitsSchema = Type.Object({
  /** Bytes one tarball may unpack to. */
  tarballUnpackedBytes: Count,
  /** Entries (files, folders, links) one tarball may hold. */
  tarballEntries: Count,
  /** Bytes of one entry's path inside a tarball. */
  tarballPathLength: Count,
});

export const SettingsOutputSchema = Type.Object({
  color: Type.Union([Type.Literal("auto"), Type.Literal("always"), Type.Literal("never")]),
  json: Type.Boolean(),
});

export const ProviderIdSchema = Type.Union(PROVIDER_IDS.map((id) => Type.Literal(id)));

/** The merged settings every command sees. */
export const XcshToolsSettingsSchema = Type.Object({
  /** Registry URL that overrides the `.npmrc` default registry; unset: npm's own resolution. */
  registry: Type.Optional(Type.String()),
  /** Run lifecycle scripts of installed plugins. */
  allowScripts: Type.Boolean(),
  /** Names of the host's built-in tools (a custom tool may not take one). */
  builtInTools: Type.Array(Type.String({ minLength: 1 })),
  timeouts: SettingsTimeoutsSchema,
  /** How long a command waits for the plugins-folder lock before ELOCKED. */
  lockWaitMs: Milliseconds,
  /** Discovery sources that are skipped. */
  disabledProviders: Type.Array(ProviderIdSchema),
  output: SettingsOutputSchema,
  limits: SettingsLimitsSchema,
  /** Tokens of always-on context (tool schemas, skill and agent listings) past which doctor warns. */
  contextWarnTokens: Count,
});
export type XcshToolsSettings = Static<typeof XcshToolsSettingsSchema>;

/** One settings file (or the env / flags layer): any subset of the settings, groups included. */
export const XcshToolsSettingsFileSchema = Type.Partial(
  Type.Object({
    $schema: Type.String(),
    ...XcshToolsSettingsSchema.properties,
    timeouts: Type.Partial(SettingsTimeoutsSchema),
    output: Type.Partial(SettingsOutputSchema),
    limits: Type.Partial(SettingsLimitsSchema),
  }),
);
export type XcshToolsSettingsFile = Static<typeof XcshToolsSettingsFileSchema>;
