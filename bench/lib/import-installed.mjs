/**
 * What a user does by hand to get the guarantee `xcsh-tools install` gives (issue 44): after
 * `npm install` of some plugins, one `node` process that imports every tool module they declare
 * (`xcsh.tools` in each package.json), all at once, and calls each factory once, as the install's
 * module checker does. The install benchmark adds its time to npm's.
 *
 *   node bench/lib/import-installed.mjs <project folder> <package name>...
 * Exits 1 when a tool fails to load or a plugin declares none: a fast wrong answer measures nothing.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import * as typebox from "@sinclair/typebox";

const [project, ...names] = process.argv.slice(2);
const files = names.flatMap((name) => {
  const dir = path.join(project, "node_modules", name);
  const tools = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8")).xcsh?.tools;
  const entries = typeof tools === "string" ? [tools] : Array.isArray(tools) ? tools : [];
  if (entries.length === 0) throw new Error(`import-installed: ${name} declares no tools`);
  return entries.map((entry) => path.join(dir, entry));
});
const api = { cwd: project, typebox, hasUI: false, exec: async () => ({ stdout: "", stderr: "", code: 0, killed: false }) };
const modules = await Promise.all(files.map((file) => import(pathToFileURL(file).href)));
for (const module of modules) {
  const tools = await (module.default ?? module)(api);
  if (!tools || typeof tools !== "object") throw new Error("import-installed: a factory returned no tool");
}
