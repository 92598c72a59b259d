/**
 * One exit code per error code: every `new XcshToolsError("ECODE", ...)` in src/ names a code of
 * the table in src/core/errors.ts, and no throw site asks for another exit code than the table's
 * (the CLI takes the table's anyway, so a disagreeing `exitCode` would be a lie in the code).
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { parseSync } from "rolldown/experimental";
import { describe, expect, it } from "vitest";
import { EXIT_CODES, XcshToolsError, exitCodeOfCode } from "../../src/core/errors.js";

const SRC = path.resolve(import.meta.dirname, "../../src");

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sourceFiles(path.join(dir, e.name)) : e.name.endsWith(".ts") ? [path.join(dir, e.name)] : []));
}

interface ThrowSite {
  where: string;
  code: string;
  exitCode?: number;
}

type AstNode = { type: string; start: number; [key: string]: unknown };
const isNode = (value: unknown): value is AstNode => typeof value === "object" && value !== null && typeof (value as AstNode).type === "string";

/**
 * Every `new XcshToolsError(<string literal>, ..., {exitCode: <n>})` of src/, found in the syntax
 * tree (oxc's parser, which rolldown — already our bundler — exposes; TypeScript 7 has no JS API).
 */
function throwSites(): ThrowSite[] {
  const sites: ThrowSite[] = [];
  for (const file of sourceFiles(SRC)) {
    const text = readFileSync(file, "utf8");
    const parsed = parseSync(file, text);
    expect(parsed.errors, file).toEqual([]);
    const visit = (node: AstNode): void => {
      const args = node.arguments as AstNode[] | undefined;
      const callee = node.callee as AstNode | undefined;
      const first = args?.[0];
      if (node.type === "NewExpression" && callee?.type === "Identifier" && callee.name === "XcshToolsError" && first?.type === "Literal" && typeof first.value === "string") {
        const where = `${path.relative(SRC, file)}:${text.slice(0, node.start).split("\n").length}`;
        const options = args?.[2];
        let exitCode: number | undefined;
        if (options?.type === "ObjectExpression") {
          for (const property of options.properties as AstNode[]) {
            const key = property.key as AstNode | undefined;
            const value = property.value as AstNode | undefined;
            if (property.type === "Property" && key?.type === "Identifier" && key.name === "exitCode" && value?.type === "Literal" && typeof value.value === "number") exitCode = value.value;
          }
        }
        sites.push({ where, code: first.value, ...(exitCode === undefined ? {} : { exitCode }) });
      }
      for (const child of Object.values(node)) {
        if (Array.isArray(child)) child.filter(isNode).forEach(visit);
        else if (isNode(child)) visit(child);
      }
    };
    visit(parsed.program as unknown as AstNode);
  }
  return sites;
}

describe("EXIT_CODES", () => {
  const sites = throwSites();

  it("finds the throw sites of src/", () => {
    expect(sites.length).toBeGreaterThan(100);
  });

  it("lists every code thrown in src/", () => {
    const missing = [...new Set(sites.filter((s) => !Object.hasOwn(EXIT_CODES, s.code)).map((s) => `${s.code} (${s.where})`))];
    expect(missing).toEqual([]);
  });

  it("no throw site asks for another exit code than the table's", () => {
    const disagreeing = sites.filter((s) => s.exitCode !== undefined && s.exitCode !== exitCodeOfCode(s.code)).map((s) => `${s.where}: ${s.code} exitCode ${s.exitCode}, table ${exitCodeOfCode(s.code)}`);
    expect(disagreeing).toEqual([]);
  });

  it("docs/error-codes.md lists every code under its exit code", () => {
    const doc = readFileSync(path.resolve(SRC, "../docs/error-codes.md"), "utf8");
    const listed = (exit: 1 | 2) => {
      const at = doc.indexOf(`**Exit ${exit}**`);
      return new Set([...doc.slice(at, doc.indexOf("\n\n", doc.indexOf("\n", at) + 1)).matchAll(/`(E[A-Z0-9_]+)`/g)].map((m) => m[1]!));
    };
    for (const exit of [1, 2] as const) {
      expect([...listed(exit)].sort(), `exit ${exit}`).toEqual(Object.entries(EXIT_CODES).filter(([, e]) => e === exit).map(([code]) => code).sort());
    }
  });

  it("the table decides the exit code of a listed code, whatever the throw site says", () => {
    expect(new XcshToolsError("ENOT_FOUND", "x", { exitCode: 2 }).exitCode).toBe(1);
    expect(new XcshToolsError("EUSAGE", "x").exitCode).toBe(2);
    // A validator's issue code passed through keeps what the reader asked for.
    expect(new XcshToolsError("ESETTING_TYPE", "x", { exitCode: 2 }).exitCode).toBe(2);
    expect(new XcshToolsError("ESETTING_TYPE", "x").exitCode).toBe(1);
  });
});
