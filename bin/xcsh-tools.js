#!/usr/bin/env node
// The same shim runs under Node and Bun: all logic lives in the built CLI.
import module from "node:module";

// Node >= 22.1 keeps V8's compiled code of every module across runs (in the OS temp folder, as
// npm's own CLI does); it is off under NODE_DISABLE_COMPILE_CACHE. Older Node and Bun lack it.
module.enableCompileCache?.();
await import("../dist/cli/main.js");
