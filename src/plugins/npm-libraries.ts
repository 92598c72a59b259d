/**
 * npm's libraries (CommonJS packages), each evaluated on its first use: `outdated` never pays for
 * arborist. npm-client.ts imports this module on first use, so a command that never talks to a
 * registry never loads it. In the build's bundle each `require` below is the bundler's (the line
 * marked `unbundled only` is dropped by scripts/build.mjs), so the packages are inside the
 * bundle, where the sigstore and @npmcli/run-script they require at load are evaluated only on
 * first use (scripts/lib/bundle.mjs `lazyRequires`). Unbundled (the tests run the sources), they
 * load from node_modules.
 */
import { createRequire } from "node:module";

const require = createRequire(import.meta.url); // unbundled only

// The build's chunk of this module runs npm's libraries through it (script-cache.ts); unbundled, unused.
export { runCachedScript } from "./script-cache.js";

type Pacote = typeof import("pacote");
type ArboristClass = typeof import("@npmcli/arborist").default;
type Tar = typeof import("tar");

export function pacote(): Pacote {
  return require("pacote") as Pacote;
}

export function Arborist(): ArboristClass {
  return require("@npmcli/arborist") as ArboristClass;
}

/** node-tar as pacote requires it: one instance, the one pacote extracts with (package.json holds pacote's range of it). */
export function tar(): Tar {
  return require("tar") as Tar;
}

/** What the restore reads of npm's content-addressed cache (cacache has no typings of its own). */
export interface Cacache {
  get: {
    /** The content file for `integrity`, if present: its size and `stat` (ENOENT is `false`). */
    hasContent(cache: string, integrity: string): Promise<false | { size: number; stat: import("node:fs").Stats }>;
    /** The bytes of `integrity`'s content file, checked against it (EINTEGRITY otherwise); `size` skips a second `stat`. */
    byDigest(cache: string, integrity: string, opts?: { size?: number; memoize?: false }): Promise<Buffer>;
  };
}

/** npm's cache library, the instance pacote reads and writes the cache with (package.json holds pacote's range of it). */
export function cacache(): Cacache {
  return require("cacache") as Cacache;
}
