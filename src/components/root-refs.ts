/**
 * How a command names files of its plugin: `${CLAUDE_PLUGIN_ROOT}` (or xcsh's
 * `${XCSH_PLUGIN_ROOT}`) followed by a path, up to whitespace, a quote or shell punctuation.
 * The scan checks such paths stay inside the plugin (scan.ts); the boot index fingerprints the
 * files they name once resolved (boot/components-inputs.ts). A module of its own, free of the
 * component readers, because the boot index loads it on its fresh path.
 */

export const ROOT_VARS = ["${CLAUDE_PLUGIN_ROOT}", "${XCSH_PLUGIN_ROOT}"] as const;

/** Replace the plugin-root variables in `value` by `root`. */
export function substituteRoot(value: string, root: string): string {
  let out = value;
  for (const v of ROOT_VARS) out = out.split(v).join(root);
  return out;
}

/** The path a command names from `start` on in `text`: up to whitespace, a quote or shell punctuation. */
export function pathTailAt(text: string, start: number): string {
  return /^[^\s"'`;|&<>()]*/.exec(text.slice(start))?.[0] ?? "";
}
