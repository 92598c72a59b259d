#!/usr/bin/env node
// The same shim runs under Node and Bun: all logic lives in the built CLI.
import "../dist/cli/main.js";
