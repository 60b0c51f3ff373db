/** Shared by the tests that start programs on ports of their own (test/launcher). */
import * as net from "node:net";

function listening(): Promise<net.Server> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => resolve(srv));
  });
}

/**
 * `n` distinct ports the OS just handed out on 127.0.0.1, closed again for the program under test to use.
 * All are held open until every one is known, so two calls cannot return the same port.
 */
export async function freePorts(n: number): Promise<number[]> {
  const servers: net.Server[] = [];
  try {
    for (let i = 0; i < n; i++) servers.push(await listening());
    return servers.map((s) => (s.address() as net.AddressInfo).port);
  } finally {
    await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  }
}

/** One such port. */
export async function freePort(): Promise<number> {
  return (await freePorts(1))[0];
}
