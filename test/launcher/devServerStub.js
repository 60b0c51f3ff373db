// Stands in for the webpack dev server in the launcher's tests (`npm start -- --test-dev-server
// this-file`): answers on PPM_DEV_PORT like the real one, with the run's X-PPM-Launch-Id header,
// so the launcher's own logic runs without a slow webpack build.
"use strict";
const http = require("http");

const server = http.createServer((req, res) => {
  res.writeHead(200, { "Content-Type": "text/html", "X-PPM-Launch-Id": process.env.PPM_LAUNCH_ID || "" });
  res.end("<!doctype html><title>stub task pane</title>");
});
server.listen(Number(process.env.PPM_DEV_PORT), "localhost", () => {
  // What webpack.config.js prints when no trusted development certificate could be installed.
  console.warn(`[webpack] dev certificates unavailable (Unable to install the CA certificate (test stub)); serving over http://localhost:${process.env.PPM_DEV_PORT}.`);
  console.log(`stub dev server on ${process.env.PPM_DEV_PORT}`);
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));
