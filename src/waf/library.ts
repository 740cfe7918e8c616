/**
 * libmodsecurity3 (ModSecurity v3's C API, `modsecurity/modsecurity.h`, `rules_set.h`, `transaction.h`,
 * `intervention.h`) through bun:ffi, opened only when a route first asks for a WAF: a gateway without the
 * library starts and serves every other route; a WAF route then fails closed (engine.ts).
 */
import { dlopen } from "bun:ffi";

/** Debian's soname (package `libmodsecurity3`); the loader searches the usual library paths. */
export const defaultLibraryPath = "libmodsecurity.so.3";

/**
 * Where the library is opened from: `GATEHOUSE_WAF_LIBRARY` overrides the soname. Tests point it at a
 * path that does not exist to prove a WAF route fails closed; nothing else should need it.
 */
export function libraryPath(): string {
  const env = process.env.GATEHOUSE_WAF_LIBRARY;
  return env !== undefined && env !== "" ? env : defaultLibraryPath;
}

// Strings go in as NUL-terminated bytes through `ptr` (a Buffer is passed by address, no copy).
const ptr = "ptr";
const cstring = "cstring";
const i32 = "i32";
const u64 = "u64";
const none = "void";
const fn = "function";

const symbols = {
  msc_init: { args: [], returns: ptr },
  msc_set_connector_info: { args: [ptr, ptr], returns: none },
  msc_who_am_i: { args: [ptr], returns: cstring },
  msc_cleanup: { args: [ptr], returns: none },
  // (instance, void (*cb)(void *data, const void *message)): every rule match's message, during the call
  msc_set_log_cb: { args: [ptr, fn], returns: none },
  msc_create_rules_set: { args: [], returns: ptr },
  // (rules, text, const char **error) → rules added, or -1 with *error malloc'd
  msc_rules_add: { args: [ptr, ptr, ptr], returns: i32 },
  msc_rules_cleanup: { args: [ptr], returns: i32 },
  msc_new_transaction_with_id: { args: [ptr, ptr, ptr, ptr], returns: ptr },
  msc_process_connection: { args: [ptr, ptr, i32, ptr, i32], returns: i32 },
  msc_process_uri: { args: [ptr, ptr, ptr, ptr], returns: i32 },
  msc_add_n_request_header: { args: [ptr, ptr, u64, ptr, u64], returns: i32 },
  msc_process_request_headers: { args: [ptr], returns: i32 },
  msc_append_request_body: { args: [ptr, ptr, u64], returns: i32 },
  msc_process_request_body: { args: [ptr], returns: i32 },
  msc_add_n_response_header: { args: [ptr, ptr, u64, ptr, u64], returns: i32 },
  msc_process_response_headers: { args: [ptr, i32, ptr], returns: i32 },
  msc_process_logging: { args: [ptr], returns: i32 },
  msc_intervention: { args: [ptr, ptr], returns: i32 },
  msc_transaction_cleanup: { args: [ptr], returns: none },
} as const;

/** libc's free, for the strings ModSecurity mallocs (an intervention's url and log, a rule error). */
const libcSymbols = { free: { args: [ptr], returns: none } } as const;

export type ModSecurityLibrary = ReturnType<typeof dlopen<typeof symbols>>["symbols"];
export type LibC = ReturnType<typeof dlopen<typeof libcSymbols>>["symbols"];

/** The opened library, or why it could not be opened (kept: a missing library is not retried per apply). */
export type LoadedLibrary =
  | { readonly msc: ModSecurityLibrary; readonly libc: LibC }
  | { readonly error: string };

const opened = new Map<string, LoadedLibrary>();

/** Opens the library at `path` once per process; later calls return the same result. */
export function openLibrary(path: string = libraryPath()): LoadedLibrary {
  const known = opened.get(path);
  if (known !== undefined) return known;
  let loaded: LoadedLibrary;
  try {
    const msc = dlopen(path, symbols).symbols;
    const libc = dlopen(process.platform === "darwin" ? "libc.dylib" : "libc.so.6", libcSymbols).symbols;
    loaded = { msc, libc };
  } catch (err) {
    loaded = { error: `libmodsecurity3 could not be loaded from ${path}: ${(err as Error).message}` };
  }
  opened.set(path, loaded);
  return loaded;
}
