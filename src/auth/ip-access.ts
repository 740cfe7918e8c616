/**
 * The client address lists of a route (model `ipAccess`), compiled once and checked first by both fronts'
 * edge guards (request/guards.ts, raw-front/edge-guards.ts): deny before allow, as ingress-nginx writes
 * nginx's `deny`/`allow` lines. An address that cannot be read, and a list translation marked invalid,
 * are refused: never open. A refusal is a 403 with a problem+json body that names no list entry.
 */
import type { IPAccessList } from "../model/index.ts";
import { type AddressSet, addressSet, clientAddress, setHas } from "../model/ip-ranges.ts";

interface CompiledList {
  readonly allow: AddressSet | undefined;
  readonly deny: AddressSet;
  readonly invalid: boolean;
}

/** A route's lists, ready to check; the same object for every route sharing the model's lists. */
export type CompiledIPAccess = readonly CompiledList[];

const compiledLists = new WeakMap<IPAccessList, CompiledList>();

function compiledList(list: IPAccessList): CompiledList {
  let c = compiledLists.get(list);
  if (c === undefined) {
    c = {
      allow: list.allow.length > 0 ? addressSet(list.allow) : undefined,
      deny: addressSet(list.deny),
      invalid: list.invalid !== undefined,
    };
    compiledLists.set(list, c);
  }
  return c;
}

/** Undefined when the route has no lists. */
export function compileIPAccess(lists: readonly IPAccessList[] | undefined): CompiledIPAccess | undefined {
  if (lists === undefined || lists.length === 0) return undefined;
  return lists.map(compiledList);
}

const words = new Uint32Array(4);

/** A deny list names the client, a list is invalid, or the address cannot be read: 403, always. */
export const IP_REFUSED = 0;
/** Outside some allow list: 403, unless the route lets credentials stand in (`satisfy: Any`). */
export const IP_OUTSIDE = 1;
/** No list refuses the client and none has an allow list: the other guards decide. */
export const IP_PASSED = 2;
/** Inside every allow list (there is one), no deny list: under `satisfy: Any`, no credentials needed. */
export const IP_ALLOWED = 3;
export type IPVerdict = typeof IP_REFUSED | typeof IP_OUTSIDE | typeof IP_PASSED | typeof IP_ALLOWED;

/** What the route's lists say of the client at `ip`; deny lists and invalid lists first, over every list. */
export function ipVerdict(access: CompiledIPAccess, ip: string): IPVerdict {
  const family = clientAddress(ip, words);
  if (family === 0) return IP_REFUSED;
  let verdict: IPVerdict = IP_PASSED;
  for (let i = 0; i < access.length; i++) {
    const list = access[i] as CompiledList;
    if (list.invalid || setHas(list.deny, family, words)) return IP_REFUSED;
    if (list.allow === undefined || verdict === IP_OUTSIDE) continue;
    verdict = setHas(list.allow, family, words) ? IP_ALLOWED : IP_OUTSIDE;
  }
  return verdict;
}

/** Does every list admit the client at `ip`? */
export function ipAdmitted(access: CompiledIPAccess, ip: string): boolean {
  return ipVerdict(access, ip) >= IP_PASSED;
}

/** Some list of the route has an allow list (so an address can be `IP_ALLOWED`). */
export function hasAllowList(access: CompiledIPAccess | undefined): boolean {
  return access?.some((l) => l.allow !== undefined) ?? false;
}

const body = JSON.stringify({
  type: "about:blank",
  title: "Forbidden",
  status: 403,
  detail: "The client address is not allowed to use this route.",
});

/** The answer to a refused address. */
export function ipRefused(serverHeader: string): Response {
  return new Response(body, {
    status: 403,
    headers: {
      "content-type": "application/problem+json",
      "cache-control": "no-store",
      server: serverHeader,
    },
  });
}
