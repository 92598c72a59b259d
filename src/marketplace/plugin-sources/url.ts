/** `{source: "url", url, ref?, sha?}`: a plugin that is a whole git repository. */
import { wholeRepositorySource } from "./git-common.js";

export const urlPluginSource = wholeRepositorySource("url", "url");
