/**
 * Paths as the user gave them (issue 45): `validate ../../some/catalog` speaks of
 * `../../some/catalog/.claude-plugin/marketplace.json`, not of a path rebuilt from the current
 * folder (which climbs as `../../..` once symlinks or the temp folder's real path differ from the
 * typed one) and not of absolute paths inside messages. One place, so that the headings, the
 * component list, the summary line and the messages agree.
 */
import { realpathSync } from "node:fs";
import path from "node:path";

export interface UserPaths {
  /** A file or folder of the report, shown from the path as typed when it lies under it. */
  file(absolute: string): string;
  /** A message with every absolute path under the target rewritten as typed. */
  text(message: string): string;
}

/** `typed` is the path the user gave (relative to `cwd`, or absolute). */
export function userPaths(typed: string, cwd: string): UserPaths {
  const root = path.resolve(cwd, typed);
  let real = root;
  try {
    real = realpathSync.native(root);
  } catch {
    // Nothing at the path: the report is about the path as resolved.
  }
  // The longest spelling first, so that a real path that extends the resolved one is replaced whole.
  const roots = [...new Set([root, real])].sort((a, b) => b.length - a.length);
  const shown = typed === "" ? "." : typed.replace(/[\\/]+$/, "") || typed;
  const under = (absolute: string): string | undefined => {
    for (const r of roots) {
      if (absolute === r) return shown;
      if (absolute.startsWith(r + path.sep)) return shown === "." ? absolute.slice(r.length + 1) : `${shown}${path.sep}${absolute.slice(r.length + 1)}`;
    }
    return undefined;
  };
  return {
    file: (absolute) => under(absolute) ?? (path.relative(cwd, absolute) || "."),
    text: (message) => {
      let out = message;
      for (const r of roots) {
        out = out.split(r + path.sep).join(shown === "." ? "" : `${shown}${path.sep}`);
        // The root itself, where it ends a path (not a longer name that starts with it).
        out = out.replace(new RegExp(`${r.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(?![\\w.-])`, "g"), shown);
      }
      return out;
    },
  };
}
