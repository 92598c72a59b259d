/**
 * docs/contract.md against the code: every table marked `<!-- contract: Interface -->` must list
 * exactly the members of that interface in src/core/contract.ts (the adapter's `execute` in
 * src/host/adapter.ts), each as optional or required as in the code, methods with the code's
 * parameter names in the code's order; and every default the page states as
 * "default `value` (`CONSTANT`)" must be that constant's value in the code, and `exec`'s default
 * `cwd` must be what the loader's `exec` really passes.
 *
 * The code is read with oxc's parser (rolldown's `parseSync`, as test/unit/import-rules.test.ts
 * does): TypeScript 7, our compiler, ships no JS compiler API (only an unstable RPC client for the
 * native binary), and a parser is sturdier than matching the interfaces' text.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { parseSync } from "rolldown/experimental";
import { describe, expect, it } from "vitest";
import { KILL_GRACE_MS, SIGTERM_CODE } from "../../src/host/exec.js";
import { CustomToolLoader, DEFAULT_FACTORY_TIMEOUT_MS } from "../../src/host/loader.js";
import { DEFAULT_IMPORT_TIMEOUT_MS } from "../../src/host/module-import.js";
import type { ExecOptions } from "../../src/core/contract.js";

const ROOT = path.resolve(import.meta.dirname, "../..");
const DOC = readFileSync(path.join(ROOT, "docs", "contract.md"), "utf8");

/** The constants whose values the page states, by the name it states them under. */
const CONSTANTS: Record<string, number> = { KILL_GRACE_MS, SIGTERM_CODE, DEFAULT_FACTORY_TIMEOUT_MS, DEFAULT_IMPORT_TIMEOUT_MS };

/** A member as the code declares it, and as the page writes it: `name`, `name?`, `name(a, b?)`, `name?(a)`. */
interface Member {
  name: string;
  optional: boolean;
  /** Parameter names (with `?` when optional) for a method; undefined for a property. */
  params: string[] | undefined;
}
const signature = (m: Member) => `${m.name}${m.optional ? "?" : ""}${m.params ? `(${m.params.join(", ")})` : ""}`;

type Node = { type: string; [key: string]: any };

function parse(file: string): Node[] {
  const result = parseSync(path.basename(file), readFileSync(path.join(ROOT, file), "utf8"));
  expect(result.errors, file).toEqual([]);
  return result.program.body as Node[];
}

const paramOf = (p: Node) => `${p.type === "RestElement" ? "..." : ""}${p.name ?? p.argument?.name ?? p.left?.name}${p.optional ? "?" : ""}`;

/** The members of the exported interface `name` of contract.ts. */
function interfaceMembers(body: Node[], name: string): Member[] {
  const declaration = body.map((n) => n.declaration ?? n).find((d) => d?.type === "TSInterfaceDeclaration" && d.id.name === name);
  if (!declaration) throw new Error(`src/core/contract.ts has no interface ${name}`);
  return (declaration.body.body as Node[]).map((m) => ({
    name: m.key.name,
    optional: Boolean(m.optional),
    params: m.type === "TSMethodSignature" ? (m.params as Node[]).map(paramOf) : undefined,
  }));
}

/** The adapter's `execute`, the agent's order. */
function adapterExecute(): Member[] {
  const adapter = parse("src/host/adapter.ts")
    .map((n) => n.declaration ?? n)
    .find((d) => d?.type === "ClassDeclaration" && d.id.name === "CustomToolAdapter");
  const method = (adapter.body.body as Node[]).find((m) => m.type === "MethodDefinition" && m.key.name === "execute")!;
  return [{ name: "execute", optional: false, params: (method.value.params as Node[]).map(paramOf) }];
}

/** The first cells of the table right after `<!-- contract: name -->`, parsed as members. */
function documented(name: string): Member[] {
  const marker = `<!-- contract: ${name} -->`;
  const at = DOC.indexOf(marker);
  if (at < 0) throw new Error(`docs/contract.md has no ${marker}`);
  const table = /^\s*((?:\|.*\|\n?)+)/.exec(DOC.slice(at + marker.length))?.[1] ?? "";
  return table
    .split("\n")
    .slice(2) // header and separator
    .filter((row) => row.startsWith("|"))
    .map((row) => {
      const cell = /^\|\s*`([^`]+)`/.exec(row)?.[1];
      const match = cell && /^(\w+)(\?)?(?:\((.*)\))?$/.exec(cell);
      if (!match) throw new Error(`docs/contract.md (${name}): the first cell of "${row}" is not \`member\`, \`member?\` or \`member(args)\``);
      return { name: match[1]!, optional: Boolean(match[2]), params: match[3] === undefined ? undefined : match[3] === "" ? [] : match[3].split(/,\s*/) };
    });
}

describe("docs/contract.md", () => {
  const contract = parse("src/core/contract.ts");
  const interfaces = ["CustomToolAPI", "ExecOptions", "ExecResult", "CustomTool", "AgentToolResult", "CustomToolContext", "CustomToolUIContext", "CustomToolLogger", "CustomToolPendingAction", "RenderResultOptions"];

  for (const name of interfaces) {
    it(`lists every member of ${name}, as the code declares it, and nothing else`, () => {
      expect(documented(name).map(signature)).toEqual(interfaceMembers(contract, name).map(signature));
    });
  }

  it("documents the interfaces a tool sees: every interface the api, ctx, exec and the tool definition use", () => {
    const marked = [...DOC.matchAll(/<!-- contract: ([\w.]+) -->/g)].map((m) => m[1]);
    expect(marked.sort()).toEqual([...interfaces, "CustomToolAdapter.execute"].sort());
  });

  it("states the agent's argument order as the adapter declares it", () => {
    expect(documented("CustomToolAdapter.execute").map(signature)).toEqual(adapterExecute().map(signature));
    // And the prose names both orders as the code has them.
    const tool = interfaceMembers(contract, "CustomTool").find((m) => m.name === "execute")!;
    expect(DOC).toContain(`**\`(${tool.params!.map((p) => p.replace("?", "")).join(", ")})\`**`);
    expect(DOC).toContain(`**\`(${adapterExecute()[0]!.params!.map((p) => p.replace("?", "")).join(", ")})\`**`);
  });

  it("every default it states with a constant is that constant's value in the code, and each constant is stated", () => {
    const stated = [...DOC.matchAll(/default `([^`]+)`(?:\s+ms)?\s+\(`([A-Z][A-Z0-9_]*)`/g)].map((m) => ({ constant: m[2]!, value: m[1]! }));
    expect(stated.map((s) => s.constant).sort()).toEqual(expect.arrayContaining(Object.keys(CONSTANTS).sort()));
    for (const { constant, value } of stated) {
      expect(Object.keys(CONSTANTS), `docs/contract.md names ${constant}, which this test does not know`).toContain(constant);
      expect({ constant, value }).toEqual({ constant, value: String(CONSTANTS[constant]) });
    }
  });

  it("exec's default cwd is api.cwd, as the loader passes it (and an explicit cwd wins)", async () => {
    expect(DOC).toMatch(/\| `cwd\?` \| default `api\.cwd` \|/);
    const seen: (ExecOptions | undefined)[] = [];
    const loader = new CustomToolLoader(undefined, "/the/project", [], undefined, {
      exec: async (_command, _args, options) => {
        seen.push(options);
        return { stdout: "", stderr: "", code: 0, killed: false };
      },
    });
    await loader.api.exec("true", []);
    await loader.api.exec("true", [], { cwd: "/elsewhere" });
    expect(seen.map((o) => o?.cwd)).toEqual([loader.api.cwd, "/elsewhere"]);
    expect(seen[0]?.timeout).toBeUndefined(); // "none (no limit)": nothing adds a timeout
  });
});
