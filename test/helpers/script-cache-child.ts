/**
 * Child of test/security/script-cache.test.ts: runs the classic script argv[2] through
 * runCachedScript (src/plugins/script-cache.ts) with 41 as its argument, calls the exports named
 * after it and prints their answers as one JSON line. The cache is written when this process exits.
 */
import { pathToFileURL } from "node:url";
import { runCachedScript } from "../../src/plugins/script-cache.js";

const [script, ...calls] = process.argv.slice(2);
const lib = runCachedScript(pathToFileURL(script!), [41]);
console.log(JSON.stringify({ answers: calls.map((name) => lib[name]!()) }));
