/** `ppm doctor`'s default origin (issue #25): the running dev server, else the last run's record, else a prediction. */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { devServerOrigin } from "../../src/cli/devOrigin";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "ppm-devorigin-"));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
const noServer = () => Promise.resolve(null);

function homeWith(files: string[]): string {
  const home = fs.mkdtempSync(path.join(tmp, "home-"));
  fs.mkdirSync(path.join(home, ".office-addin-dev-certs"));
  for (const f of files) fs.writeFileSync(path.join(home, ".office-addin-dev-certs", f), "x");
  return home;
}

describe("devServerOrigin", () => {
  const env = { PPM_DEV_PORT: "3999", PPM_STATE_DIR: path.join(tmp, "none") };
  const certs = ["ca.crt", "localhost.crt", "localhost.key"];

  it("predicts https only when the certificate files are there AND their authority is trusted", async () => {
    const home = homeWith(certs);
    expect(await devServerOrigin(env, { home, probe: noServer, caInstalled: () => true })).toMatchObject({ origin: "https://localhost:3999", source: "predicted" });
    expect(await devServerOrigin(env, { home, probe: noServer, caInstalled: () => false })).toMatchObject({ origin: "http://localhost:3999" });
    expect((await devServerOrigin(env, { home, probe: noServer, caInstalled: () => null })).why).toMatch(/cannot be checked/);
    expect(await devServerOrigin(env, { home: homeWith(["localhost.crt"]), probe: noServer, caInstalled: () => true })).toMatchObject({ origin: "http://localhost:3999" });
    expect(await devServerOrigin({ ...env, PPM_DEV_HTTP: "1" }, { home, probe: noServer, caInstalled: () => true })).toMatchObject({ origin: "http://localhost:3999", source: "env" });
  });

  it("a running npm start wins; a server that is not npm start's does not count", async () => {
    const home = homeWith(certs);
    expect(await devServerOrigin(env, { home, probe: () => Promise.resolve({ scheme: "https", launched: true }), caInstalled: () => false })).toMatchObject({ origin: "https://localhost:3999", source: "running" });
    expect(await devServerOrigin(env, { home, probe: () => Promise.resolve({ scheme: "https", launched: false }), caInstalled: () => false })).toMatchObject({ origin: "http://localhost:3999", source: "predicted" });
  });

  it("npm start running on another port (--port), as its last start recorded, is found when the configured port is free", async () => {
    const state = fs.mkdtempSync(path.join(tmp, "state-"));
    fs.writeFileSync(path.join(state, "dev-server.json"), JSON.stringify({ origin: "http://localhost:3001", at: "2026-11-30T14:00:00Z" }));
    const probed: number[] = [];
    const onlyOn3001 = (port: number) => {
      probed.push(port);
      return Promise.resolve(port === 3001 ? { scheme: "http" as const, launched: true } : null);
    };
    const noPortEnv = { PPM_STATE_DIR: state };
    expect(await devServerOrigin(noPortEnv, { home: homeWith([]), probe: onlyOn3001 })).toMatchObject({ origin: "http://localhost:3001", source: "running" });
    expect(probed).toEqual([3000, 3001]);
    // Not running there any more: the prediction for the configured port, as before.
    expect(await devServerOrigin(noPortEnv, { home: homeWith([]), probe: noServer })).toMatchObject({ origin: "http://localhost:3000", source: "predicted" });
    // A recorded origin on its scheme's default port (no port in the URL) is probed on that port.
    fs.writeFileSync(path.join(state, "dev-server.json"), JSON.stringify({ origin: "https://localhost:443", at: "2026-11-30T14:00:00Z" }));
    probed.length = 0;
    await devServerOrigin(noPortEnv, { home: homeWith([]), probe: onlyOn3001 });
    expect(probed).toEqual([3000, 443]);
    fs.writeFileSync(path.join(state, "dev-server.json"), JSON.stringify({ origin: "http://localhost:3001", at: "2026-11-30T14:00:00Z" }));
    // PPM_DEV_PORT names the port: it is not second-guessed.
    expect(await devServerOrigin({ ...noPortEnv, PPM_DEV_PORT: "3999" }, { home: homeWith([]), probe: onlyOn3001 })).toMatchObject({ origin: "http://localhost:3999" });
  });

  it("an unreadable or foreign record is ignored", async () => {
    const state = fs.mkdtempSync(path.join(tmp, "state-"));
    fs.writeFileSync(path.join(state, "dev-server.json"), JSON.stringify({ origin: "https://evil.example.com:3999", at: "2026-01-01T00:00:00Z" }));
    expect(await devServerOrigin({ ...env, PPM_STATE_DIR: state }, { home: homeWith([]), probe: noServer })).toMatchObject({ source: "predicted" });
    fs.writeFileSync(path.join(state, "dev-server.json"), "{not json");
    expect(await devServerOrigin({ ...env, PPM_STATE_DIR: state }, { home: homeWith([]), probe: noServer })).toMatchObject({ source: "predicted" });
  });
});
