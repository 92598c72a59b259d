/**
 * The `tree1` hash of a plugin folder (marketplace/tree.ts `hashTree`): seeds (`xcsh-seed.json`
 * /plugins/<name>/tree) and team locks (`hash`) carry it, so it is a format. Its walk reads
 * synchronously (issue 43: the seed restore re-hashes every seeded plugin); the digest of a tree
 * that exercises every rule (byte order of names, `.git` at any depth, the executable bit and no
 * other mode bit, links as their text, dangling ones too, empty and binary files) is pinned to the
 * one the earlier promise-based walk gave, so no seed or lock made before stops matching.
 */
import { chmod, mkdir, rm, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { hashTree } from "../../src/marketplace/tree.js";
import { worldPerTest, type TmpWorld } from "../helpers/tmp-home.js";

let w: TmpWorld;
worldPerTest((world) => (w = world), "xcsh-tools-tree-hash-");

/** Every rule of the walk in one folder; `dir` must not exist. */
async function hostileTree(dir: string): Promise<string> {
  const file = async (rel: string, data: string | Uint8Array, mode = 0o644) => {
    await mkdir(path.dirname(path.join(dir, rel)), { recursive: true });
    await writeFile(path.join(dir, rel), data);
    await chmod(path.join(dir, rel), mode);
  };
  // Byte order, not locale order: "B.js" before "a", "a" before "a-b" before "a.js".
  await file("b.js", "b\n");
  await file("B.js", "B\n");
  await file("a.js", "export const a = 1;\n");
  await file("a-b/x.txt", "x\n");
  await file("a/deep/er/file.json", "{}\n");
  await file("bin/run.sh", "#!/bin/sh\necho hi\n", 0o755);
  await file("empty", "");
  await file("binary", Uint8Array.from({ length: 256 }, (_, i) => i));
  // .git is never hashed, at the top or below.
  await file(".git/HEAD", "ref: refs/heads/main\n");
  await file("a/.git/config", "[core]\n");
  await symlink("a.js", path.join(dir, "link"));
  await symlink("../nowhere", path.join(dir, "a", "dangling"));
  return dir;
}

describe("hashTree: the tree1 digest", () => {
  it("is the digest the earlier walk gave for a tree exercising every rule", async () => {
    const dir = await hostileTree(path.join(w.root, "t"));
    expect(await hashTree(dir)).toBe("9cd3fc3f98b42a78aa43381a3aab8de5315f96f2872e43f6433b4fd08d16597b");
  });

  it("follows the content: each rule's input changes the digest, what the rules leave out does not", async () => {
    const dir = await hostileTree(path.join(w.root, "t"));
    const base = await hashTree(dir);
    // Left out: modes other than the executable bit, anything inside .git.
    await chmod(path.join(dir, "b.js"), 0o600);
    await writeFile(path.join(dir, "a", ".git", "config"), "[core]\n\tbare = true\n");
    expect(await hashTree(dir)).toBe(base);
    const changes: [string, () => Promise<void>][] = [
      ["a byte of a file", () => writeFile(path.join(dir, "a", "deep", "er", "file.json"), "{ }\n")],
      ["the executable bit", () => chmod(path.join(dir, "b.js"), 0o700)],
      ["a link's text", async () => {
        await rm(path.join(dir, "link"));
        await symlink("b.js", path.join(dir, "link"));
      }],
      ["an empty folder added", () => mkdir(path.join(dir, "a", "new"))],
    ];
    const seen = new Set([base]);
    for (const [what, change] of changes) {
      await change();
      const next = await hashTree(dir);
      expect(seen.has(next), what).toBe(false);
      seen.add(next);
    }
  });

  it("a folder that cannot be read is a rejected promise, not a throw (callers chain .catch)", async () => {
    let call: Promise<string> | undefined;
    expect(() => {
      call = hashTree(path.join(w.root, "missing"));
    }).not.toThrow();
    await expect(call).rejects.toMatchObject({ code: "ENOENT" });
  });
});
