// Child-process entry of test/helpers/registry.ts: runs Verdaccio (in this process, through its
// `runServer` API) on 127.0.0.1 with the config passed as argv[2] (JSON), listens on port 0, and
// reports the port over IPC. Exits when the parent goes away, so a crashed test run never leaves
// a registry behind.
"use strict";
const { runServer } = require("verdaccio");

const config = JSON.parse(process.argv[2]);
process.on("disconnect", () => process.exit(0));
process.on("SIGTERM", () => process.exit(0));

runServer(config)
  .then((server) => {
    server.keepAliveTimeout = 1000;
    server.listen(0, "127.0.0.1", () => {
      process.send({ type: "listening", port: server.address().port });
    });
    server.on("error", (error) => {
      process.send({ type: "error", message: String(error && error.stack ? error.stack : error) });
      process.exit(1);
    });
  })
  .catch((error) => {
    process.send({ type: "error", message: String(error && error.stack ? error.stack : error) });
    process.exit(1);
  });
