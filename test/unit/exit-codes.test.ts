/**
 * One exit code per error code: every `new XcshToolsError("ECODE", ...)` in src/ names a code of
 * the table in src/core/errors.ts, and no throw site asks for another exit code than the table's
 * (the CLI takes the table's anyway, so a disagreeing `exitCode` would be a lie in the code).
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import ts from "typescript";
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

/** Every `new XcshToolsError(<string literal>, ..., {exitCode: <n>})` of src/. */
function throwSites(): ThrowSite[] {
  const sites: ThrowSite[] = [];
  for (const file of sourceFiles(SRC)) {
    const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node): void => {
      if (ts.isNewExpression(node) && node.expression.getText(source) === "XcshToolsError" && node.arguments?.[0] && ts.isStringLiteral(node.arguments[0])) {
        const where = `${path.relative(SRC, file)}:${source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1}`;
        const options = node.arguments[2];
        let exitCode: number | undefined;
        if (options && ts.isObjectLiteralExpression(options)) {
          for (const property of options.properties) {
            if (ts.isPropertyAssignment(property) && property.name.getText(source) === "exitCode" && ts.isNumericLiteral(property.initializer)) exitCode = Number(property.initializer.text);
          }
        }
        sites.push({ where, code: node.arguments[0].text, ...(exitCode === undefined ? {} : { exitCode }) });
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
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
