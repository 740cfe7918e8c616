import { parse as parseYaml } from "yaml";
import { ApiError, type Obj } from "./kube-api-store.ts";

/**
 * The PATCH bodies the API server accepts, by Content-Type. Strategic merge patch and server-side apply
 * are approximated by JSON merge patch (no list-merge keys, no field managers): enough for the writes
 * client code makes on the objects we serve, and stated here so nobody mistakes it for the real thing.
 */
export function applyPatch(target: Obj, contentType: string, text: string): Obj {
  const type = contentType.split(";")[0]?.trim() ?? "";
  switch (type) {
    case "application/merge-patch+json":
    case "application/strategic-merge-patch+json":
      return mergePatch(target, parseJson(text)) as Obj;
    case "application/apply-patch+yaml":
    case "application/apply-patch+json":
      return mergePatch(target, parseYaml(text)) as Obj;
    case "application/json-patch+json":
      return jsonPatch(target, parseJson(text));
    default:
      throw new ApiError(
        415,
        "UnsupportedMediaType",
        `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json`,
      );
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new ApiError(400, "BadRequest", `invalid JSON: ${(err as Error).message}`);
  }
}

/** RFC 7386. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== "object" || Array.isArray(patch)) return structuredClone(patch);
  const out: Obj =
    target && typeof target === "object" && !Array.isArray(target) ? { ...(target as Obj) } : {};
  for (const [k, v] of Object.entries(patch as Obj)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

interface Op {
  op: string;
  path: string;
  from?: string;
  value?: unknown;
}

/** RFC 6902: add, remove, replace, move, copy, test. */
export function jsonPatch(target: Obj, ops: unknown): Obj {
  if (!Array.isArray(ops)) throw new ApiError(400, "BadRequest", "a JSON patch must be an array");
  let doc: unknown = structuredClone(target);
  for (const op of ops as Op[]) {
    switch (op.op) {
      case "add":
        doc = put(doc, op.path, structuredClone(op.value), "add");
        break;
      case "replace":
        doc = put(doc, op.path, structuredClone(op.value), "replace");
        break;
      case "remove":
        doc = remove(doc, op.path);
        break;
      case "move": {
        const v = read(doc, op.from ?? "");
        doc = put(remove(doc, op.from ?? ""), op.path, v, "add");
        break;
      }
      case "copy":
        doc = put(doc, op.path, structuredClone(read(doc, op.from ?? "")), "add");
        break;
      case "test":
        if (JSON.stringify(read(doc, op.path)) !== JSON.stringify(op.value)) {
          throw new ApiError(422, "Invalid", `the test operation failed at ${op.path}`);
        }
        break;
      default:
        throw new ApiError(400, "BadRequest", `unknown JSON patch operation "${op.op}"`);
    }
  }
  return doc as Obj;
}

const tokens = (path: string) =>
  path === ""
    ? []
    : path
        .slice(1)
        .split("/")
        .map((t) => t.replaceAll("~1", "/").replaceAll("~0", "~"));

function read(doc: unknown, path: string): unknown {
  let cur = doc as Obj;
  for (const t of tokens(path)) {
    if (cur === null || typeof cur !== "object" || !(t in cur))
      throw new ApiError(422, "Invalid", `no value at ${path}`);
    cur = cur[t];
  }
  return cur;
}

function parentOf(doc: unknown, path: string): { parent: Obj; last: string } {
  const ts = tokens(path);
  const last = ts.pop();
  if (last === undefined) throw new ApiError(422, "Invalid", "cannot patch the document root");
  const parent = read(doc, ts.length ? `/${ts.join("/")}` : "") as Obj;
  if (parent === null || typeof parent !== "object")
    throw new ApiError(422, "Invalid", `no object at ${path}`);
  return { parent, last };
}

function put(doc: unknown, path: string, value: unknown, mode: "add" | "replace"): unknown {
  const { parent, last } = parentOf(doc, path);
  if (Array.isArray(parent)) {
    const i = last === "-" ? parent.length : Number(last);
    if (!Number.isInteger(i) || i < 0 || i > parent.length)
      throw new ApiError(422, "Invalid", `bad index in ${path}`);
    if (mode === "add") parent.splice(i, 0, value);
    else parent[i] = value;
  } else {
    if (mode === "replace" && !(last in parent))
      throw new ApiError(422, "Invalid", `no value at ${path} to replace`);
    parent[last] = value;
  }
  return doc;
}

function remove(doc: unknown, path: string): unknown {
  const { parent, last } = parentOf(doc, path);
  if (Array.isArray(parent)) parent.splice(Number(last), 1);
  else if (last in parent) delete parent[last];
  else throw new ApiError(422, "Invalid", `no value at ${path} to remove`);
  return doc;
}
