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

/** Does every list admit the client at `ip`? */
export function ipAdmitted(access: CompiledIPAccess, ip: string): boolean {
  const family = clientAddress(ip, words);
  if (family === 0) return false;
  for (let i = 0; i < access.length; i++) {
    const list = access[i] as CompiledList;
    if (list.invalid || setHas(list.deny, family, words)) return false;
    if (list.allow !== undefined && !setHas(list.allow, family, words)) return false;
  }
  return true;
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
