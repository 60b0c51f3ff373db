/** The `npm run service` CLI: argument parsing, and a real start/stop of the process. */
import { spawn } from "node:child_process";
import { resolve } from "node:path";
import { parseArgs, DEFAULT_PORT } from "../../src/reference/main";

describe("parseArgs", () => {
  test("defaults: port 4100, headers exposed, request lines logged", () => {
    expect(parseArgs([])).toEqual({ port: DEFAULT_PORT, datasetRows: {}, absentGroups: [], exposeHeaders: true, quiet: false });
    expect(DEFAULT_PORT).toBe(4100);
  });

  test("all flags", () => {
    expect(
      parseArgs(["--port", "0", "--dataset-rows", "financials=200000,projects=10", "--absent", "snapshot", "--absent", "record", "--no-expose-headers", "--quiet"]),
    ).toEqual({
      port: 0,
      datasetRows: { financials: 200000, projects: 10 },
      absentGroups: ["snapshot", "record"],
      exposeHeaders: false,
      quiet: true,
    });
    expect(parseArgs(["--port=4321"]).port).toBe(4321);
    // CORS for the origins given (npm start passes its dev server's), in place of the default.
    expect(parseArgs(["--allow-origin", "https://localhost:3100", "--allow-origin", "http://localhost:3100"]).allowedOrigins).toEqual(["https://localhost:3100", "http://localhost:3100"]);
  });

  test.each([
    [["--port"], /--port needs a value/],
    [["--port", "http"], /--port must be/],
    [["--port", "70000"], /--port must be/],
    [["--dataset-rows", "financials"], /key=count/],
    [["--dataset-rows", "financials=-1"], /key=count/],
    [["--absent", "snapshots"], /--absent takes/],
    [["--bogus"], /unknown argument '--bogus'/],
    [["--allow-origin"], /--allow-origin needs a value/],
    [["--allow-origin", "*"], /--allow-origin: '\*' is not an origin/],
    [["--allow-origin", "https://localhost:3000/taskpane.html"], /not an http\(s\) origin/],
  ])("%j is refused with a clear message", (argv, message) => {
    expect(() => parseArgs(argv)).toThrow(message);
  });
});

test("the CLI prints its URL and demo tokens, serves, and stops on SIGTERM", async () => {
  const tsx = resolve(__dirname, "../../node_modules/.bin/tsx");
  const child = spawn(tsx, [resolve(__dirname, "../../src/reference/main.ts"), "--port", "0", "--quiet"], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  try {
    let out = "";
    const url = await new Promise<string>((ok, fail) => {
      child.stdout.on("data", (d: Buffer) => {
        out += d.toString();
        const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
        if (m && out.includes("demo-globex-token")) ok(m[1]);
      });
      child.once("exit", (code) => fail(new Error(`exited early with ${code}: ${out}`)));
    });
    expect(out).toContain("demo-acme-token");
    expect(out).toContain("demo-api-auth");
    const res = await fetch(url + "/api/bi/v1/manifest", { headers: { "Company-Api-Token": "demo-acme-token" } });
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    const exited = new Promise<number | null>((ok) => child.once("exit", (code) => ok(code)));
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  }
});

test("the CLI refuses bad arguments with exit code 2 and a usage line", async () => {
  const tsx = resolve(__dirname, "../../node_modules/.bin/tsx");
  const child = spawn(tsx, [resolve(__dirname, "../../src/reference/main.ts"), "--port", "nope"], { stdio: ["ignore", "pipe", "pipe"] });
  let err = "";
  child.stderr.on("data", (d: Buffer) => (err += d.toString()));
  const code = await new Promise<number | null>((ok) => child.once("exit", (c) => ok(c)));
  expect(code).toBe(2);
  expect(err).toMatch(/--port must be/);
  expect(err).toMatch(/usage: npm run service/);
});
