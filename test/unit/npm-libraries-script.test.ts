/**
 * The build's npm-libraries chunk as a script run through the code cache (scripts/lib/bundle.mjs
 * `npmLibrariesAsScript`, src/plugins/script-cache.ts): the cache file records which exports a run
 * called as one byte's bits, so the build refuses a chunk with more than 8 exports of its own
 * rather than ship a cache that is rewritten at every run that calls a ninth.
 */
import { describe, expect, it } from "vitest";
// @ts-expect-error: the build's plain-JS module has no types.
import { npmLibrariesAsScript } from "../../scripts/lib/bundle.mjs";

/** The chunk's text with `count` exports of its own, and what the plugin emitted for it. */
function build(count: number): { code: string; emitted: { fileName: string; source: string }[] } {
  const names = Array.from({ length: count }, (_, i) => `lib${i}`);
  const chunk = {
    type: "chunk",
    name: "npm-libraries",
    fileName: "chunks/npm-libraries-abc.js",
    code: `import { t as runCachedScript } from "./script-cache-x.js";\n${names.map((n) => `const ${n} = () => "${n}";`).join("\n")}\nexport { ${[...names, "runCachedScript"].join(", ")} };\n`,
  };
  const emitted: { fileName: string; source: string }[] = [];
  (npmLibrariesAsScript.generateBundle as (this: unknown, o: unknown, out: unknown) => void).call({ emitFile: (file: { fileName: string; source: string }) => emitted.push(file) }, {}, { [chunk.fileName]: chunk });
  return { code: chunk.code, emitted };
}

describe("npmLibrariesAsScript: the exports the code cache can record", () => {
  it("8 exports of its own: the chunk becomes the small module, its body the script", () => {
    const { code, emitted } = build(8);
    expect(emitted.map((file) => file.fileName)).toEqual(["chunks/npm-libraries-abc.script"]);
    expect(emitted[0]!.source).toContain("return { lib0, lib1, lib2, lib3, lib4, lib5, lib6, lib7 };");
    expect(code).toContain("runCachedScript(new URL(");
  });

  it("9 exports of its own: the build fails, naming the chunk and the limit", () => {
    expect(() => build(9)).toThrow(/npm-libraries-abc\.js: 9 exports of its own; the code cache records at most 8/);
  });
});
