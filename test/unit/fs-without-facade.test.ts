/**
 * node:fs without its ES facade (scripts/lib/bundle.mjs `fsWithoutFacade`): an ES import of node:fs
 * makes Node read every export of it once, which loads fs/promises, readline and the streams in
 * every CLI process. The built package takes node:fs through `process.getBuiltinModule` instead,
 * and the build refuses a chunk graph with a cycle, where a `const` could be read before it is set.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
// @ts-expect-error: the build's plain-JS module has no types.
import { fsWithoutFacade } from "../../scripts/lib/bundle.mjs";
import { distJsFiles } from "../helpers/build-dist.js";
import { REPO_ROOT } from "../helpers/runtimes.js";

interface FakeChunk {
  type: "chunk";
  fileName: string;
  imports: string[];
}

const render = (code: string): string | null => fsWithoutFacade.renderChunk(code)?.code ?? null;
const generate = (chunks: FakeChunk[]): void => fsWithoutFacade.generateBundle({}, Object.fromEntries(chunks.map((c) => [c.fileName, c])));


describe("node:fs taken without its ES facade", () => {
  it("rewrites a chunk's named import of node:fs, renamed names included, and leaves other imports as they are", () => {
    expect(render(`import { a, b as c } from "node:fs";\nimport { join } from "node:path";\nexport const x = a;\n`)).toBe(
      `const { a, b: c } = process.getBuiltinModule("node:fs");\nimport { join } from "node:path";\nexport const x = a;\n`,
    );
    expect(render(`import {\n\treadFileSync,\n\tstatSync as st\n} from "node:fs";\n`)).toBe(`const {\n\treadFileSync,\n\tstatSync: st\n} = process.getBuiltinModule("node:fs");\n`);
    expect(render(`import { readFile } from "node:fs/promises";\n`)).toBeNull();
  });

  it("refuses chunks that import one another in a cycle, naming them, and takes a graph without one", () => {
    expect(() => generate([{ type: "chunk", fileName: "a.js", imports: ["b.js"] }, { type: "chunk", fileName: "b.js", imports: ["c.js"] }, { type: "chunk", fileName: "c.js", imports: ["a.js"] }])).toThrow(/cycle \(a\.js -> b\.js -> c\.js -> a\.js\)/);
    expect(() => generate([{ type: "chunk", fileName: "a.js", imports: ["b.js", "c.js"] }, { type: "chunk", fileName: "b.js", imports: ["c.js"] }, { type: "chunk", fileName: "c.js", imports: [] }])).not.toThrow();
  });

  it("the built package imports node:fs as an ES module nowhere, and takes it through process.getBuiltinModule", () => {
    // vitest's global setup built dist/ from src.
    const files = distJsFiles();
    const esImports = files.filter((file) => /^\s*(import|export)\b[^;]*\bfrom\s*["']node:fs["']|^\s*import\s*["']node:fs["']/m.test(readFileSync(file, "utf8")));
    expect(esImports.map((file) => path.relative(REPO_ROOT, file))).toEqual([]);
    expect(files.filter((file) => readFileSync(file, "utf8").includes(`process.getBuiltinModule("node:fs")`)).length).toBeGreaterThan(10);
  });
});
