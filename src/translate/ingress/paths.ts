import type { PathMatch } from "../../model/index.ts";

export type PathParse =
  | { readonly ok: true; readonly path: PathMatch }
  | { readonly ok: false; readonly message: string };

/** Sequences the API server refuses in Exact and Prefix paths (networking validation). */
const invalidSequences = ["//", "/./", "/../", "%2f", "%2F"];
const invalidSuffixes = ["/..", "/."];

/**
 * An Ingress path and pathType as a route PathMatch.
 * - `Exact`: the path as written (trailing slash significant); a path is required.
 * - `Prefix`: a missing path means `/`; one trailing slash is dropped (`/foo/` → `/foo`, `/` stays),
 *   since the data plane's Prefix match is element-wise and ignores it anyway.
 * - `ImplementationSpecific`: treated as `Prefix`, like ingress-nginx without its regex annotations.
 *   The API server checks only that such a path is absolute, so only that is checked here; any trailing
 *   slashes are dropped.
 * Exact and Prefix paths are checked as the API server does (absolute, no `//`, `/./`, `/../`, `%2f`,
 * no `/.` or `/..` at the end).
 */
export function parseIngressPath(pathType: string | undefined, path: string | undefined): PathParse {
  const given = typeof path === "string" && path !== "" ? path : undefined;
  switch (pathType) {
    case "Exact": {
      if (given === undefined) return { ok: false, message: "required when pathType is Exact" };
      const problem = strictPathProblem(given);
      return problem ? { ok: false, message: problem } : { ok: true, path: { type: "Exact", value: given } };
    }
    case "Prefix": {
      if (given === undefined) return { ok: true, path: { type: "Prefix", value: "/" } };
      const problem = strictPathProblem(given);
      if (problem) return { ok: false, message: problem };
      return { ok: true, path: { type: "Prefix", value: stripTrailingSlashes(given) } };
    }
    case "ImplementationSpecific": {
      if (given === undefined) return { ok: true, path: { type: "Prefix", value: "/" } };
      if (!given.startsWith("/")) return { ok: false, message: notAbsolute };
      return { ok: true, path: { type: "Prefix", value: stripTrailingSlashes(given) } };
    }
    default:
      return {
        ok: false,
        message: `pathType "${String(pathType)}" is not one of Exact, Prefix, ImplementationSpecific`,
      };
  }
}

const notAbsolute = 'must be an absolute path (start with "/")';

function strictPathProblem(path: string): string | undefined {
  if (!path.startsWith("/")) return notAbsolute;
  for (const seq of invalidSequences) if (path.includes(seq)) return `must not contain '${seq}'`;
  for (const suffix of invalidSuffixes) if (path.endsWith(suffix)) return `must not end with '${suffix}'`;
  return undefined;
}

function stripTrailingSlashes(path: string): string {
  const stripped = path.replace(/\/+$/, "");
  return stripped === "" ? "/" : stripped;
}
