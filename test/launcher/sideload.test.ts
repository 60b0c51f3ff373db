/**
 * `npm run sideload` (scripts/sideload.js), run as a user runs it. This machine has no desktop Excel
 * (Linux): it says so plainly, names the manifest for Excel on the web, and sideloads nothing. The
 * manifest for another port is the repository's, rewritten as the dev server rewrites it.
 */
import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import * as os from "node:os";
import * as path from "node:path";

const root = path.resolve(__dirname, "..", "..");
const state = fs.mkdtempSync(path.join(os.tmpdir(), "ppm-sideload-"));
afterAll(() => fs.rmSync(state, { recursive: true, force: true }));

function sideload(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [path.join(root, "scripts/sideload.js"), ...args], { cwd: root, env: { PATH: process.env.PATH, HOME: state, PPM_STATE_DIR: state } }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout, stderr }),
    );
  });
}

const linux = process.platform === "linux";

describe("npm run sideload", () => {
  (linux ? it : it.skip)("without desktop Excel (Linux) says so plainly, names the manifest for Excel on the web, and sideloads nothing", async () => {
    const r = await sideload([]);
    // Status 2, as `npm run test:excel` without Excel (issue #37); the manifest by its absolute path.
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("there is no desktop Excel for Linux, so nothing was sideloaded.");
    expect(r.stderr).toContain(`Upload My Add-in > ${path.join(root, "manifest.xml")}\n`);
    expect(r.stdout).not.toContain("office-addin-debugging…");
  });

  (linux ? it : it.skip)("for another port names (and writes) that port's manifest", async () => {
    const r = await sideload(["--port", "3001"]);
    expect(r.code).toBe(2);
    const written = path.join(state, "manifest-3001.xml");
    // The absolute path, wherever the checkout and the working directory are (issue #37).
    expect(r.stderr).toContain(`Upload My Add-in > ${written}\n`);
    const text = fs.readFileSync(written, "utf8");
    expect(text).toContain("https://localhost:3001/taskpane.html");
    expect(text).not.toContain("localhost:3000");
    expect(text).toBe(fs.readFileSync(path.join(root, "manifest.xml"), "utf8").split("https://localhost:3000").join("https://localhost:3001"));
  });

  (linux ? it : it.skip)("without desktop Excel says whether Excel on the web could load the pane now: not while npm start serves http, nor before it runs", async () => {
    // A dev server that serves http (as npm start does when no certificate authority could be installed).
    const server = http.createServer((_req, res) => res.end("<!doctype html>"));
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const port = (server.address() as AddressInfo).port;
    try {
      const r = await sideload(["--port", String(port)]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`But npm start serves http on port ${port}, and Excel loads add-ins over https only`);
      expect(r.stderr).toContain("npx office-addin-dev-certs install");
      expect(r.stderr).toContain(`the browser preview, http://localhost:${port}/preview.html`);
    } finally {
      await new Promise((r) => server.close(r));
    }
    // The same port, now that nothing answers there.
    const none = await sideload(["--port", String(port)]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain(`Start the task pane first: npm start -- --port ${port}`);
    expect(none.stderr).not.toContain("preview.html");
  });

  it("refuses a bad port with status 2, and --help lists the options", async () => {
    const bad = await sideload(["--port", "x"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--port must be a port number");
    const help = await sideload(["--help"]);
    expect(help.code).toBe(0);
    for (const w of ["--port N", "--stop", "office-addin-debugging", "Upload My Add-in", "Exit status"]) expect(help.stdout).toContain(w);
  });

  (linux ? it : it.skip)("prints the same absolute manifest path from any working directory", async () => {
    const elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), "ppm-cwd-"));
    try {
      const r = await new Promise<{ stderr: string }>((resolve) =>
        execFile(process.execPath, [path.join(root, "scripts/sideload.js")], { cwd: elsewhere, env: { PATH: process.env.PATH, HOME: state, PPM_STATE_DIR: state } }, (_e, _o, stderr) => resolve({ stderr })),
      );
      expect(r.stderr).toContain(`Upload My Add-in > ${path.join(root, "manifest.xml")}\n`);
    } finally {
      fs.rmSync(elsewhere, { recursive: true, force: true });
    }
  });
});
