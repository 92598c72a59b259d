/**
 * The provider registry, keyed by id and listed in the order of docs/library-api.md. Adding a source is adding a
 * file in this folder and one line here (and its id in `PROVIDER_IDS`).
 */
import type { ProviderId } from "../../core/host-options.js";
import type { ToolProvider } from "../types.js";
import { claudePluginsProvider } from "./claude-plugins.js";
import { claudeProvider } from "./claude.js";
import { codexProvider } from "./codex.js";
import { configProvider } from "./config.js";
import { nativeProvider } from "./native.js";
import { npmProvider } from "./npm.js";

export { addToolEntries } from "./npm.js";
import { xcshPluginsProvider } from "./xcsh-plugins.js";

/** Every provider by id; iterate `PROVIDER_IDS` for the order. */
export const TOOL_PROVIDERS: Readonly<Record<ProviderId, ToolProvider>> = {
  native: nativeProvider,
  claude: claudeProvider,
  codex: codexProvider,
  "claude-plugins": claudePluginsProvider,
  "xcsh-plugins": xcshPluginsProvider,
  npm: npmProvider,
  config: configProvider,
};
