/**
 * nginx's `proxy_connect_timeout` on the fetch path, as near as fetch allows. Bun's fetch has no connect
 * limit and never says when its connection opened (or whether it took a pooled one), so the connect
 * cannot be timed apart from the wait for the answer. Instead: once an attempt has waited `ms` without
 * response headers, a probe connection is opened to the same endpoint; if the probe cannot open within
 * `ms` either, the endpoint is taken as unreachable and the attempt abandoned as a connect failure. So a
 * connect that never completes fails after `ms` to `2 × ms` (the raw front: `ms`), and a backend that is
 * reachable but slow to answer costs one probe (a connection opened and closed with nothing sent) and is
 * then waited for under the attempt's own limit. A probe refused outright says nothing about fetch's
 * connection (fetch reports its own refusals), so only a probe that times out counts.
 */

/** Watches one attempt to `base` (`http://ip:port`); returns the function that stops the watch. */
export function watchConnect(base: string, ms: number, unreachable: () => void): () => void {
  let stopped = false;
  let probeTimer: Timer | undefined;
  const firstTimer = setTimeout(() => {
    const at = address(base);
    if (at === undefined) return;
    probeTimer = setTimeout(() => {
      if (!stopped) unreachable();
    }, ms);
    // Opened (now or after the watch stopped): it has said what it could, and is closed.
    Bun.connect({
      hostname: at.hostname,
      port: at.port,
      socket: {
        open(s) {
          clearTimeout(probeTimer);
          s.end();
        },
        data() {},
      },
    }).catch(() => clearTimeout(probeTimer));
  }, ms);
  return () => {
    stopped = true;
    clearTimeout(firstTimer);
    clearTimeout(probeTimer);
  };
}

function address(base: string): { hostname: string; port: number } | undefined {
  try {
    const u = new URL(base);
    return { hostname: u.hostname.replace(/^\[|\]$/g, ""), port: Number(u.port || 80) };
  } catch {
    return undefined;
  }
}
