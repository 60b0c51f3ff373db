/**
 * Issue #25 item 3, end to end: `ppm doctor` reports the origin `npm start` really serves. The
 * launcher (scripts/start.js) runs as a user runs it, with the real reference service and the stub
 * dev server (devServerStub.js), which serves http and says why as webpack does when no trusted
 * development certificate could be installed; the CLI runs as `node bin/ppm.js`. Certificate files
 * in HOME (generated before an installation fails) must not make doctor say https.
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { freePorts } from "../helpers/freePort";

const root = path.resolve(__dirname, "..", "..");
const stub = path.join(__dirname, "devServerStub.js");

function ppm(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [path.join(root, "bin/ppm.js"), ...args], { cwd: root, env: { PATH: process.env.PATH, ...env } }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout, stderr }),
    );
  });
}

/** A text table's wrapped DETAIL cells joined back onto their rows (for matching). */
const flat = (s: string) => s.replace(/\n {20,}/g, " ");

let tmp: string;
let home: string;
let launcher: ChildProcess | null = null;
beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "ppm-doctor-"));
  // The certificate files office-addin-dev-certs writes before it tries (and fails) to install its authority.
  home = path.join(tmp, "home");
  fs.mkdirSync(path.join(home, ".office-addin-dev-certs"), { recursive: true });
  for (const f of ["ca.crt", "localhost.crt", "localhost.key"]) fs.writeFileSync(path.join(home, ".office-addin-dev-certs", f), "generated, never trusted");
});
afterAll(async () => {
  if (launcher && launcher.exitCode === null) {
    const gone = new Promise((r) => launcher!.once("exit", r));
    launcher.kill("SIGTERM");
    await gone;
  }
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe("ppm doctor reports what npm start serves", () => {
  it("while npm start runs over http, after it stopped, and before it ever ran", async () => {
    const [devPort, servicePort] = await freePorts(2);
    const state = path.join(tmp, "state");
    const env = { HOME: home, PPM_STATE_DIR: state, PPM_DEV_PORT: String(devPort), PPM_TOKEN: "demo-acme-token" };
    const service = `http://localhost:${servicePort}`;

    // Before npm start ever ran here: the certificate files exist, their authority is not trusted.
    const before = await ppm(["doctor", "--env", service], env);
    expect(flat(before.stdout)).toMatch(new RegExp(`add-in origin +ok +http://localhost:${devPort} \\(port from PPM_DEV_PORT; http: the development certificate authority is not installed`));

    launcher = spawn(process.execPath, [path.join(root, "scripts/start.js"), "--port", String(devPort), "--service-port", String(servicePort), "--test-dev-server", stub], {
      cwd: root,
      env: { ...process.env, HOME: home, PPM_STATE_DIR: state, PPM_SERVICE_URL: "" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    launcher.stdout!.on("data", (d: Buffer) => (out += d.toString()));
    launcher.stderr!.on("data", (d: Buffer) => (out += d.toString()));
    for (let i = 0; i < 200 && !/Task pane {9}: /.test(out); i++) await new Promise((r) => setTimeout(r, 100));
    expect(out).toContain(`Task pane         : http://localhost:${devPort}/taskpane.html`);
    expect(out).toMatch(/NOTE: serving over http/);

    const running = await ppm(["doctor", "--env", service], env);
    expect(running.code).toBe(0);
    expect(flat(running.stdout)).toMatch(new RegExp(`add-in origin +ok +http://localhost:${devPort} \\(npm start is running on port ${devPort} and serves http;`));
    // The CORS check used that origin.
    expect(flat(running.stdout)).toContain(`origin http://localhost:${devPort} may send the add-in's headers`);
    const record = JSON.parse(fs.readFileSync(path.join(state, "dev-server.json"), "utf8")) as { origin: string; httpReason?: string };
    expect(record).toMatchObject({ origin: `http://localhost:${devPort}`, httpReason: "Unable to install the CA certificate (test stub)" });

    const gone = new Promise((r) => launcher!.once("exit", r));
    launcher.kill("SIGTERM");
    await gone;
    // npm start has stopped: doctor says what it served when it last ran, and why http. The
    // reference service is gone with it, so reachability fails; the origin is still reported.
    const after = await ppm(["doctor", "--env", service], env);
    expect(flat(after.stdout)).toMatch(new RegExp(`add-in origin +ok +http://localhost:${devPort} \\(what npm start served when it last ran \\(\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC\\), http: Unable to install the CA certificate \\(test stub\\)`));
    expect(flat(after.stdout)).toMatch(/reachability +FAIL +Could not reach localhost:\d+: the connection was refused/);
  }, 60000);
});
