/**
 * `npm start` (scripts/start.js), run the way a user runs it: a separate node process with flags,
 * on ports chosen free for the test. The webpack dev server is replaced by a small stub
 * (`--test-dev-server`, devServerStub.js) because a webpack build takes a minute on a small
 * machine; the reference service is the real one.
 */
import { spawn, type ChildProcess } from "child_process";
import * as http from "http";
import * as path from "path";
import { freePort, freePorts } from "../helpers/freePort";
import { CONTROL } from "../helpers/control";

const root = path.resolve(__dirname, "..", "..");
const launcher = path.join(root, "scripts", "start.js");
const stub = path.join(__dirname, "devServerStub.js");

/** Another program's web server on `port`: it answers every path with 200, as a stray dev server would. */
function otherProgram(port: number): Promise<http.Server> {
  return new Promise((resolve, reject) => {
    const srv = http.createServer((_req, res) => res.end("someone else's server"));
    srv.once("error", reject);
    srv.listen(port, "127.0.0.1", () => resolve(srv));
  });
}

const closeServer = (srv: http.Server): Promise<void> => new Promise((r) => srv.close(() => r()));

interface Run {
  child: ChildProcess;
  output: () => string;
  stderr: () => string;
  /** Resolves with the first match of `re` in the combined output, rejects after `ms`. */
  waitFor: (re: RegExp, ms: number) => Promise<RegExpMatchArray>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function launch(args: string[]): Run {
  const env = { ...process.env };
  delete env.PPM_DEV_PORT;
  delete env.PPM_SERVICE_PORT;
  delete env.PPM_SERVICE_URL;
  const child = spawn(process.execPath, [launcher, ...args], { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  const waiters: Array<() => void> = [];
  const changed = (): void => {
    for (const w of [...waiters]) w();
  };
  child.stdout.on("data", (d: Buffer) => {
    out += d.toString();
    changed();
  });
  child.stderr.on("data", (d: Buffer) => {
    const s = d.toString();
    out += s;
    err += s;
    changed();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal })),
  );
  const waitFor = (re: RegExp, ms: number): Promise<RegExpMatchArray> =>
    new Promise((resolve, reject) => {
      const check = (): void => {
        const m = out.match(re);
        if (m) {
          waiters.splice(waiters.indexOf(check), 1);
          clearTimeout(timer);
          resolve(m);
        }
      };
      const timer = setTimeout(() => {
        waiters.splice(waiters.indexOf(check), 1);
        reject(new Error(`no ${re} within ${ms} ms; output so far:\n${out}`));
      }, ms);
      waiters.push(check);
      check();
    });
  return { child, output: () => out, stderr: () => err, waitFor, exited };
}

function get(port: number): Promise<number | string> {
  return new Promise((resolve) => {
    const req = http.get({ host: "localhost", port, path: "/taskpane.html", timeout: 2000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("error", (e: NodeJS.ErrnoException) => resolve(e.code ?? "error"));
    req.on("timeout", () => req.destroy());
  });
}

const running: ChildProcess[] = [];
afterEach(async () => {
  // SIGTERM first: the launcher then stops its own children, so a failed test leaves no servers behind.
  for (const c of running.splice(0)) {
    if (c.exitCode !== null || c.signalCode !== null) continue;
    const gone = new Promise((r) => c.once("exit", r));
    c.kill("SIGTERM");
    await Promise.race([gone, new Promise((r) => setTimeout(r, 6000))]);
    if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  }
});

describe("npm start -- --help", () => {
  it("prints the options and their environment variables, starts nothing and exits 0", async () => {
    const run = launch(["--help"]);
    const { code } = await run.exited;
    expect(code).toBe(0);
    const out = run.output();
    expect(out).toMatch(/^Usage: npm start/);
    for (const word of ["--port N", "--service-port N", "PPM_DEV_PORT", "PPM_SERVICE_PORT", "--test-dev-server"]) expect(out).toContain(word);
    expect(out).not.toContain("[service]");
    expect(out).not.toContain("[start]");
  });

  it("rejects a port that is not a number with status 2 and points at --help", async () => {
    const run = launch(["--port", "30x0"]);
    const { code } = await run.exited;
    expect(code).toBe(2);
    expect(run.stderr()).toContain("--port must be a port number from 1 to 65535, got '30x0'");
    expect(run.stderr()).toContain("npm start -- --help");
  });
});

describe("npm start with a port already taken", () => {
  /** Runs the launcher (stub dev server) while another program holds the dev server's or the service's port; after it exits. */
  async function withPortTaken(taken: "dev" | "service"): Promise<{ devPort: number; servicePort: number; code: number | null; err: string; output: string }> {
    const [devPort, servicePort] = await freePorts(2);
    const other = await otherProgram(taken === "dev" ? devPort : servicePort);
    try {
      const run = launch(["--port", String(devPort), "--service-port", String(servicePort), "--test-dev-server", stub]);
      running.push(run.child);
      const { code } = await run.exited;
      return { devPort, servicePort, code, err: run.stderr(), output: run.output() };
    } finally {
      await closeServer(other);
    }
  }

  it("names the dev server's port and how to choose another, and starts nothing", async () => {
    const { devPort, servicePort, code, err, output } = await withPortTaken("dev");
    expect(code).toBe(1);
    expect(err).toContain(`port ${devPort} (task pane dev server) is already in use by another program`);
    expect(err).toMatch(new RegExp(`npm start -- --port \\d+ +\\(or PPM_DEV_PORT=\\d+ npm start\\)`));
    expect(err).not.toContain(`port ${servicePort}`);
    // Nothing started, and the other program was never announced as the task pane.
    expect(output).not.toContain("[service]");
    expect(output).not.toContain("Task pane");
    expect(output).toContain("Nothing was started.");
  });

  it("names the reference service's port and its flag", async () => {
    const { devPort, servicePort, code, err, output } = await withPortTaken("service");
    expect(code).toBe(1);
    expect(err).toContain(`port ${servicePort} (reference service) is already in use by another program`);
    expect(err).toMatch(/npm start -- --service-port \d+ +\(or PPM_SERVICE_PORT=\d+ npm start\)/);
    expect(err).not.toContain(`port ${devPort}`);
    expect(output).not.toContain("Reference service :");
  });

  it("names both ports when both are taken", async () => {
    const [devPort, servicePort] = await freePorts(2);
    const others = [await otherProgram(devPort), await otherProgram(servicePort)];
    try {
      const run = launch(["--port", String(devPort), "--service-port", String(servicePort)]);
      running.push(run.child);
      const { code } = await run.exited;
      expect(code).toBe(1);
      expect(run.stderr()).toContain(`port ${devPort} (task pane dev server)`);
      expect(run.stderr()).toContain(`port ${servicePort} (reference service)`);
    } finally {
      await Promise.all(others.map(closeServer));
    }
  });
});

describe("npm start -- --port N: the reference service's CORS (issue #36)", () => {
  it("answers the dev server's origins on that port, and no other", async () => {
    const [devPort, servicePort] = await freePorts(2);
    const run = launch(["--port", String(devPort), "--service-port", String(servicePort), "--test-dev-server", stub]);
    running.push(run.child);
    await run.waitFor(/Task pane {9}: http:\/\/localhost:\d+\/taskpane\.html/, 20000);
    const preflight = async (origin: string) => {
      const res = await fetch(`http://127.0.0.1:${servicePort}/__control/status`, { method: "OPTIONS", headers: { Origin: origin, "Access-Control-Request-Method": "GET", "Access-Control-Request-Headers": "x-ppm-control" } });
      return [res.status, res.headers.get("access-control-allow-origin")];
    };
    expect(await preflight(`https://localhost:${devPort}`)).toEqual([204, `https://localhost:${devPort}`]);
    expect(await preflight(`http://localhost:${devPort}`)).toEqual([204, `http://localhost:${devPort}`]);
    expect(await preflight("https://localhost:3000")).toEqual([403, null]);
    expect(await preflight("https://evil.example.com")).toEqual([403, null]);
  }, 60000);
});

describe("npm start when the reference service dies", () => {
  it("reports the real signal and exit status, restarts it a bounded number of times, then says it stopped while the dev server keeps running", async () => {
    const [devPort, servicePort] = await freePorts(2);
    const run = launch(["--port", String(devPort), "--service-port", String(servicePort), "--test-dev-server", stub]);
    running.push(run.child);
    let blocker: http.Server | null = null;
    try {
      await run.waitFor(/Task pane {9}: http:\/\/localhost:\d+\/taskpane\.html/, 20000);
      expect(run.output()).toContain(`Reference service : http://localhost:${servicePort}`);
      const firstPid = Number((await run.waitFor(/reference service starting \(pid (\d+)\)/, 1000))[1]);

      process.kill(firstPid, "SIGKILL");
      await run.waitFor(new RegExp(`reference service \\(pid ${firstPid}\\) was stopped by signal SIGKILL; restarting it \\(restart 1 of at most 3`), 10000);
      await run.waitFor(/reference service is back at/, 20000);
      const pids = [...run.output().matchAll(/reference service starting \(pid (\d+)\)/g)].map((m) => Number(m[1]));
      expect(pids).toHaveLength(2);
      expect(pids[1]).not.toBe(firstPid);

      // Kill it again and take its port, so the restarts fail on their own with a real exit status.
      process.kill(pids[1], "SIGKILL");
      await run.waitFor(new RegExp(`reference service \\(pid ${pids[1]}\\) was stopped by signal SIGKILL; restarting it \\(restart 2`), 10000);
      blocker = await otherProgram(servicePort);
      await run.waitFor(/exited with status 1; restarting it \(restart 3 of at most 3/, 20000);
      await run.waitFor(/exited with status 1\. It exited 4 times within a minute, so it stays stopped/, 20000);
      expect(run.output()).toContain("EADDRINUSE");
      expect(run.output()).toContain(`(port ${servicePort} is already in use by another program)`);
      expect(run.output()).toContain("The task pane dev server keeps running");

      // The launcher and the dev server are still up.
      await new Promise((r) => setTimeout(r, 500));
      expect(run.child.exitCode).toBeNull();
      expect(await get(devPort)).toBe(200);

      run.child.kill("SIGTERM");
      const { code } = await run.exited;
      expect(code).toBe(0);
      // Stopping the launcher stops its dev server too.
      expect(await get(devPort)).toBe("ECONNREFUSED");
    } finally {
      if (blocker) await closeServer(blocker);
    }
  }, 90000);
});

describe("npm start is quiet by default (issue #37)", () => {
  /** Starts the launcher (stub dev server), asks its service one question, and returns what it printed. */
  async function oneRequest(extra: string[]): Promise<string> {
    const [devPort, servicePort] = await freePorts(2);
    const run = launch(["--port", String(devPort), "--service-port", String(servicePort), "--test-dev-server", stub, ...extra]);
    running.push(run.child);
    await run.waitFor(/Task pane {9}: http:\/\/localhost:\d+\/taskpane\.html/, 20000);
    expect((await fetch(`http://127.0.0.1:${servicePort}/__control/status`, { headers: CONTROL })).status).toBe(200);
    if (extra.includes("--verbose")) await run.waitFor(/\[service\] GET \/__control\/status 200/, 5000);
    else await new Promise((r) => setTimeout(r, 500));
    run.child.kill("SIGTERM");
    await run.exited;
    return run.output();
  }

  it("prints no line per service request, and says how to see them", async () => {
    const out = await oneRequest([]);
    expect(out).not.toMatch(/\[service\] (GET|POST|OPTIONS) /);
    expect(out).toContain("`npm start -- --verbose` also prints every service request");
    expect(out).toContain("[service] PPM reference service listening on");
  }, 60000);

  it("--verbose prints each request the service answers", async () => {
    const out = await oneRequest(["--verbose"]);
    expect(out).toMatch(/\[service\] GET \/__control\/status 200/);
    expect(out).not.toContain("Quiet:");
  }, 60000);
});

describe("npm run service on a port that is taken (issue #37)", () => {
  it("says the port is taken, that npm start may hold it, and the command with another port; exit status 1", async () => {
    const port = await freePort();
    const other = await otherProgram(port);
    try {
      const child = spawn(process.execPath, ["--import", "tsx", path.join(root, "src/reference/main.ts"), "--port", String(port), "--dataset-rows", "financials=2000000"], { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
      let err = "";
      child.stderr.on("data", (d: Buffer) => (err += d.toString()));
      const code = await new Promise<number | null>((r) => child.on("exit", (c) => r(c)));
      expect(code).toBe(1);
      expect(err).toContain(`port ${port} is already in use (EADDRINUSE). If \`npm start\` is running, its reference service is there`);
      expect(err).toContain(`npm run service -- --port ${port + 1} --dataset-rows financials=2000000`);
      expect(err).not.toMatch(/at .*\.ts:\d+/); // a sentence, not a stack trace
    } finally {
      await closeServer(other);
    }
  }, 60000);
});
