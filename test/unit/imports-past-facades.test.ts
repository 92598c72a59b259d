/**
 * Dynamic imports past rolldown's facade chunks (scripts/lib/bundle.mjs `importsPastFacades`): an
 * `import()` of a module that sits in a hot chunk imports the chunks holding its bindings, not a
 * file that only re-exports them (one ESM module fewer to resolve, read, compile and link each). The
 * answer must read the same bindings, live; anything that is not a pure re-export is left alone.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
// @ts-expect-error: the build's plain-JS module has no types.
import { facadeBindings, importsPastFacades } from "../../scripts/lib/bundle.mjs";
import { distJsFiles } from "../helpers/build-dist.js";
import { REPO_ROOT } from "../helpers/runtimes.js";

interface FakeChunk {
  type: "chunk";
  fileName: string;
  code: string;
  isEntry?: boolean;
}

/** The chunks' code after the plugin ran over them, by file name. */
function generate(chunks: FakeChunk[]): Record<string, string> {
  const output = Object.fromEntries(chunks.map((c) => [c.fileName, { isEntry: false, ...c }]));
  importsPastFacades.generateBundle({}, output);
  return Object.fromEntries(Object.entries(output).map(([name, chunk]) => [name, chunk.code]));
}

const tmp = mkdtempSync(path.join(os.tmpdir(), "xcsh-facades-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));


describe("dynamic imports past facade chunks", () => {
  it("imports the holding chunk for a one-source facade, from the same folder, from another folder and from that chunk itself", () => {
    const out = generate([
      { type: "chunk", fileName: "chunks/state-A.js", code: `const w = await import("./world-F.js");\nexport { x as a };\n` },
      { type: "chunk", fileName: "chunks/world-F.js", code: `export { a as mutationWorld, b as hook } from "./state-A.js";\n` },
      { type: "chunk", fileName: "cli/main.js", code: `const { mutationWorld } = await import("../chunks/world-F.js");\n`, isEntry: true },
      { type: "chunk", fileName: "chunks/other.js", code: `await import("./world-F.js");\n` },
    ]);
    const expected = `import("./state-A.js").then((m0) => ({ get mutationWorld() { return m0.a; }, get hook() { return m0.b; } }))`;
    expect(out["chunks/state-A.js"]).toBe(`const w = await ${expected};\nexport { x as a };\n`);
    expect(out["chunks/other.js"]).toBe(`await ${expected};\n`);
    expect(out["cli/main.js"]).toBe(`const { mutationWorld } = await ${expected.replace('"./state-A.js"', '"../chunks/state-A.js"')};\n`);
    // The facade file itself stays (static importers, the package's files).
    expect(out["chunks/world-F.js"]).toBe(`export { a as mutationWorld, b as hook } from "./state-A.js";\n`);
  });

  it("a facade reading several chunks imports them in its order (Node's order of evaluation), each binding from its own, an unused one too", () => {
    const code = `import { Ct as selectProviders } from "./boot-index-B.js";\nimport { J as discoverToolPaths, X as CODES } from "./boot-load-L.js";\nimport { u as unused } from "./side-U.js";\nexport { CODES as DISCOVERY_ERROR_CODES, discoverToolPaths, selectProviders };\n`;
    expect(facadeBindings("chunks/discovery-F.js", code)).toEqual({
      sources: ["chunks/boot-index-B.js", "chunks/boot-load-L.js", "chunks/side-U.js"],
      bindings: [
        ["DISCOVERY_ERROR_CODES", "chunks/boot-load-L.js", "X"],
        ["discoverToolPaths", "chunks/boot-load-L.js", "J"],
        ["selectProviders", "chunks/boot-index-B.js", "Ct"],
      ],
    });
    const out = generate([
      { type: "chunk", fileName: "chunks/discovery-F.js", code },
      { type: "chunk", fileName: "chunks/user.js", code: `const d = await import("./discovery-F.js");\n` },
    ]);
    expect(out["chunks/user.js"]).toBe(
      `const d = await import("./boot-index-B.js").then((m0) => import("./boot-load-L.js").then((m1) => import("./side-U.js").then((m2) => ({ get DISCOVERY_ERROR_CODES() { return m1.X; }, get discoverToolPaths() { return m1.J; }, get selectProviders() { return m0.Ct; } }))));\n`,
    );
  });

  it("leaves alone what is not a pure re-export: side effects, export *, code, exotic names, entries, unknown or non-relative imports", () => {
    const hostile: Record<string, string> = {
      "chunks/side.js": `import "./effects.js";\nexport { n as validatePath } from "./validate.js";\n`,
      "chunks/star.js": `export * from "./state-A.js";\n`,
      "chunks/code.js": `import { a as b } from "./state-A.js";\nconst c = b + 1;\nexport { c };\n`,
      "chunks/types.js": `const KIND = { tool: 1 };\nexport { KIND as t };\n`,
      "chunks/string-name.js": `export { a as "not-an-identifier" } from "./state-A.js";\n`,
      "chunks/unknown-local.js": `export { nowhere };\n`,
      "chunks/import-only.js": `import { a } from "./state-A.js";\n`,
      "chunks/absolute.js": `export { a } from "/etc/state-A.js";\n`,
      "chunks/empty.js": `\n`,
      "chunks/comment.js": `// a comment\nexport { a } from "./state-A.js";\n`,
    };
    for (const [name, code] of Object.entries(hostile)) expect(facadeBindings(name, code), name).toBeUndefined();
    const importer = [...Object.keys(hostile).map((name) => `import("./${path.posix.basename(name)}")`), `import("./missing.js")`, `import("node:fs")`, `import("pkg/x.js")`, `import(\`./state-A.js\`)`].join(";\n");
    const entry = `export { a as mutationWorld } from "./state-A.js";\n`;
    const out = generate([
      ...Object.entries(hostile).map(([fileName, code]) => ({ type: "chunk" as const, fileName, code })),
      { type: "chunk", fileName: "chunks/entry.js", code: entry, isEntry: true },
      { type: "chunk", fileName: "chunks/user.js", code: `${importer};\nimport("./entry.js");\n` },
    ]);
    expect(out["chunks/user.js"]).toBe(`${importer};\nimport("./entry.js");\n`);
  });

  it("the rewritten import answers the same bindings as the facade, live, default included", async () => {
    const dir = mkdtempSync(path.join(tmp, "live-"));
    writeFileSync(path.join(dir, "package.json"), `{"type":"module"}\n`);
    writeFileSync(path.join(dir, "holder.js"), `let n = 1;\nfunction bump() { n++; }\nconst d = "the default";\nexport { n as a, bump as b, d as c };\n`);
    const facade = `export { a as count, b as bump, c as default } from "./holder.js";\n`;
    writeFileSync(path.join(dir, "facade.js"), facade);
    const user = `export const viaImport = () => import("./facade.js");\n`;
    const out = generate([
      { type: "chunk", fileName: "facade.js", code: facade },
      { type: "chunk", fileName: "user.js", code: user },
    ]);
    expect(out["user.js"]).not.toContain("facade.js");
    writeFileSync(path.join(dir, "user.js"), out["user.js"] ?? "");
    const { viaImport } = (await import(pathToFileURL(path.join(dir, "user.js")).href)) as { viaImport: () => Promise<{ count: number; bump: () => void; default: string }> };
    const past = await viaImport();
    const real = (await import(pathToFileURL(path.join(dir, "facade.js")).href)) as { count: number; bump: () => void; default: string };
    expect([past.count, past.default, Object.keys(past).sort()]).toEqual([1, "the default", ["bump", "count", "default"]]);
    past.bump();
    expect([past.count, real.count]).toEqual([2, 2]);
    real.bump();
    expect(past.count).toBe(3);
  });

  it("the built package: no import() names a chunk that only re-exports", () => {
    // vitest's global setup built dist/ from src.
    const dist = path.join(REPO_ROOT, "dist");
    const files = distJsFiles(dist);
    const facades = new Set(files.filter((file) => facadeBindings(path.relative(dist, file).split(path.sep).join("/"), readFileSync(file, "utf8")) !== undefined));
    expect(facades.size).toBeGreaterThan(10);
    const importsOfFacades = files.flatMap((file) =>
      [...readFileSync(file, "utf8").matchAll(/\bimport\("(\.{1,2}\/[^"]+)"\)/g)].map((m) => path.resolve(path.dirname(file), m[1] ?? "")).filter((target) => facades.has(target)).map((target) => `${path.relative(dist, file)} -> ${path.relative(dist, target)}`),
    );
    expect(importsOfFacades).toEqual([]);
  });
});
