/** A team project of a test world, as a teammate's clone has it. */
import path from "node:path";
import { writeTrustRecord, type TmpWorld } from "./tmp-home.js";

/** `<w.root>/project` declaring `declared` (xcsh-team.json, an empty `.xcsh/`), trusted by `w`'s user; its root. */
export async function trustedTeamProject(w: TmpWorld, declared: Record<string, unknown>): Promise<string> {
  const root = path.join(w.root, "project");
  await w.write(path.join(root, "xcsh-team.json"), { version: 1, plugins: declared });
  await w.write(path.join(root, ".xcsh", ".keep"), "");
  await writeTrustRecord(w.xcshHome, [root]);
  return root;
}
