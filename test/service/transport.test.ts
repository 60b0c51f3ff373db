/**
 * Transport behaviour that needs a server the reference service cannot imitate: redirects.
 */
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { PpmClient, PpmError } from "../../src/service";

function serve(handler: http.RequestListener): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer(handler);
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as AddressInfo).port;
      resolve({
        url: `http://127.0.0.1:${port}`,
        close: () =>
          new Promise<void>((r) => {
            server.close(() => r());
            server.closeAllConnections();
          }),
      });
    });
  });
}

describe("redirects", () => {
  const seenByTarget: Array<string | undefined> = [];
  let redirects = 0;
  let target: Awaited<ReturnType<typeof serve>>;
  let redirector: Awaited<ReturnType<typeof serve>>;

  beforeAll(async () => {
    target = await serve((req, res) => {
      seenByTarget.push(req.headers["company-api-token"] as string | undefined);
      res.end("{}");
    });
    redirector = await serve((_req, res) => {
      redirects++;
      res.writeHead(302, { Location: `${target.url}/api/bi/v1/manifest` });
      res.end();
    });
  });
  afterAll(async () => {
    await Promise.all([target?.close(), redirector?.close()]);
  });

  it("are refused, so the token header never travels to another host", async () => {
    // Any 8 characters of a token are redacted, so the token must not share a word with the message.
    // Retries allowed: a redirect is not a network fault, so it is not retried.
    const client = new PpmClient({ id: "r", name: "R", baseUrl: redirector.url, token: "rdr-SECRET-4471" }, { retries: 2, retryBaseDelayMs: 1 });
    redirects = 0;
    let caught: unknown;
    try {
      await client.manifest();
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(PpmError);
    expect((caught as PpmError).code).toBe("redirected");
    expect((caught as PpmError).message).toContain(`with a redirect to ${target.url},`);
    expect((caught as PpmError).action).toMatch(/address it redirects to|address the environment redirects to/);
    // Named as what it is: no "could not reach", no Local Network Access or browser policy advice (127.0.0.1 is local).
    expect(`${(caught as PpmError).message} ${(caught as PpmError).action}`).not.toMatch(/reach|Local Network|policy|CORS/i);
    expect((caught as PpmError).attempts).toBeUndefined();
    expect(redirects).toBe(1);
    expect((caught as PpmError).message).not.toContain("rdr-SECRET-4471");
    expect(seenByTarget).toEqual([]);
  });
});
