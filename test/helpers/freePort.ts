/** Shared by the tests that start programs on ports of their own (test/launcher). */
import * as net from "node:net";

/** A port the OS just handed out on 127.0.0.1, closed again for the program under test to use. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}
