import { createServer } from "node:net";

/**
 * A TCP port that was free a moment ago: bind port 0, read what the kernel gave, close. For listeners
 * that cannot take port 0 themselves (a gateway whose port is part of its config). Another process may
 * grab it in between; on loopback in tests that is rare enough.
 */
export async function freePort(host = "127.0.0.1"): Promise<number> {
  // The kernel may hand the port it just gave again; a test that picks two (a Gateway listener's, then
  // the gateway's own) must not get the same one twice, so ports already handed out are skipped.
  for (let tries = 0; tries < 50; tries++) {
    const port = await kernelPort(host);
    if (!handedOut.has(port)) {
      handedOut.add(port);
      return port;
    }
  }
  throw new Error("no port that was not handed out already");
}

const handedOut = new Set<number>();

function kernelPort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once("error", reject);
    server.listen(0, host, () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close((err) => (err || !port ? reject(err ?? new Error("no port assigned")) : resolve(port)));
    });
  });
}
