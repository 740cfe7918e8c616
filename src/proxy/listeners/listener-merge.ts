/**
 * Model listeners that share an address and port (a Gateway's port-80 listeners with different
 * hostnames; two Gateways given one internal port) are served by one socket with one host index holding
 * the virtual hosts of all of them. Translation names each virtual host by the intersection of its
 * listener's and its route's hostnames, so "the most specific virtual host wins" is listener isolation.
 *
 * Two listeners can still bring the same hostname pattern: a route on a hostname-less listener that names
 * `*.example.com` while a `*.example.com` listener exists beside it (conformance
 * GatewayHTTPListenerIsolation, "intersecting hostnames"). The request belongs to the listener whose
 * own hostname (`Listener.hostname`) is the most specific, so that listener's virtual host is kept; an
 * equal score is a real conflict (translation reports HostnameConflict): the first in model order is kept.
 * Translation also gives every listener hostname a virtual host (empty when no route covers it), so a
 * host of a specific listener never falls through to a broader one.
 */
import type { TLSCertificate } from "../../model/index.ts";
import type { CompiledVirtualHost, ListenerTable, VirtualHostIndex } from "../table.ts";

type Warn = (msg: string) => void;

/** `address:port` → the one table served there; `bind` stands in for an empty model address. */
export function groupListeners(
  tables: readonly ListenerTable[],
  bind: string,
  warn: Warn,
): Map<string, ListenerTable> {
  const groups = new Map<string, ListenerTable[]>();
  for (const lt of tables) {
    const key = `${lt.address || bind}:${lt.bindPort ?? lt.port}`;
    const group = groups.get(key);
    if (group === undefined) groups.set(key, [lt]);
    else if (group[0]?.protocol !== lt.protocol) {
      warn(
        `listener ${lt.name} (${lt.protocol}) shares ${key} with ${group[0]?.name} (${group[0]?.protocol}); not served`,
      );
    } else group.push(lt);
  }
  const out = new Map<string, ListenerTable>();
  for (const [key, group] of groups)
    out.set(key, group.length === 1 ? alone(group[0] as ListenerTable) : merge(group, key, warn));
  return out;
}

/** A listener alone on its port: only its certificate order may change (see `fallbackFirst`). */
function alone(lt: ListenerTable): ListenerTable {
  if (lt.tls?.defaultCertificate === undefined) return lt;
  const { defaultCertificate, ...tls } = lt.tls;
  return { ...lt, tls: { ...tls, certificates: fallbackFirst(tls.certificates, defaultCertificate) } };
}

/**
 * The listeners of a port that can share its TLS server: client-certificate validation is a property of
 * the handshake, before any host is known, so listeners asking for different validation (two Gateways
 * on one internal port) cannot share one. Those that differ from the first are not served (never open).
 */
function sameValidation(group: readonly ListenerTable[], key: string, warn: Warn): ListenerTable[] {
  const id = (lt: ListenerTable) => {
    const v = lt.tls?.clientValidation;
    return v === undefined ? "" : `${v.mode}\n${v.caPem}`;
  };
  const first = id(group[0] as ListenerTable);
  const kept = group.filter((lt) => id(lt) === first);
  for (const lt of group)
    if (id(lt) !== first)
      warn(
        `listener ${lt.name} asks for other client-certificate validation than ${group[0]?.name} on ${key}; not served`,
      );
  return kept;
}

interface Claim {
  readonly vh: CompiledVirtualHost;
  readonly listener: string;
  readonly score: number;
}

function merge(all: readonly ListenerTable[], key: string, warn: Warn): ListenerTable {
  const group = sameValidation(all, key, warn);
  const first = group[0] as ListenerTable;
  const exact = new Map<string, Claim>();
  const oneLabel = new Map<string, Claim>();
  const anyLabels = new Map<string, Claim>();
  const any = new Map<string, Claim>();
  const claim = (map: Map<string, Claim>, host: string, c: Claim) => {
    const cur = map.get(host);
    if (cur === undefined || c.score > cur.score) map.set(host, c);
    else if (c.score === cur.score)
      warn(
        `listeners ${cur.listener} and ${c.listener} on ${key} both serve host ${c.vh.hostname}; ${cur.listener} kept`,
      );
  };
  for (const lt of group) {
    const score = specificity(lt.hostname);
    const h = lt.hosts;
    for (const [host, vh] of h.exact) claim(exact, host, { vh, listener: lt.name, score });
    for (const [host, vh] of h.oneLabel) claim(oneLabel, host, { vh, listener: lt.name, score });
    for (const [host, vh] of h.anyLabels) claim(anyLabels, host, { vh, listener: lt.name, score });
    if (h.any !== undefined) claim(any, "*", { vh: h.any, listener: lt.name, score });
  }
  const unwrap = (m: Map<string, Claim>) => new Map([...m].map(([host, c]) => [host, c.vh]));
  const hosts: VirtualHostIndex = {
    exact: unwrap(exact),
    oneLabel: unwrap(oneLabel),
    anyLabels: unwrap(anyLabels),
    any: any.get("*")?.vh,
  };
  const certificates = fallbackFirst(
    group.flatMap((lt) => lt.tls?.certificates ?? []),
    group.find((lt) => lt.tls?.defaultCertificate !== undefined)?.tls?.defaultCertificate,
  );
  return {
    ...first,
    name: group.map((lt) => lt.name).join(","),
    memberHostnames: group.map((lt) => lt.hostname),
    tls:
      first.protocol !== "HTTPS"
        ? undefined
        : first.tls?.clientValidation
          ? { certificates, clientValidation: first.tls.clientValidation }
          : { certificates },
    hosts,
  };
}

/**
 * The port's certificates with the right fallback first (the first certificate is what a client whose
 * SNI no certificate names is offered): a listener's certificate for every host (no hostname) if there
 * is one, else the gateway's default certificate, else the first listener's own. Without this, a client
 * asking for a name no listener on the port covers would be offered whichever listener came first.
 */
export function fallbackFirst(
  certificates: readonly TLSCertificate[],
  defaultCertificate: TLSCertificate | undefined,
): TLSCertificate[] {
  const catchAll = certificates.find((c) => c.hostnames.length === 0);
  if (catchAll !== undefined) return [catchAll, ...certificates.filter((c) => c !== catchAll)];
  if (defaultCertificate !== undefined) return [defaultCertificate, ...certificates];
  return [...certificates];
}

/**
 * How specific a listener hostname is: absent (every host) is the widest (-1); otherwise two points a
 * label and one more for an exact name, so `*.b.c` scores 6 and `a.b.c` 7.
 */
export function specificity(hostname: string | undefined): number {
  if (hostname === undefined) return -1;
  const wildcard = hostname.startsWith("*.");
  const labels = (wildcard ? hostname.slice(2) : hostname).split(".").length;
  return wildcard ? (labels + 1) * 2 : labels * 2 + 1;
}
