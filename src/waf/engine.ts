/**
 * The WAF engine of one process: the ModSecurity instance, the rule sets built from routes' settings
 * (shared by every compiled route with the same directives), and one transaction per request. A
 * transaction runs whole in one synchronous call (transaction.ts) once the bounded body is read, so none
 * is ever left open across an await: an aborted request cannot leak one. A rule set is freed once no
 * compiled route holds it any more (compiled.ts counts them), so a request in flight on an old table
 * never meets freed memory.
 */

import { CString, FFIType, JSCallback, type Pointer, ptr } from "bun:ffi";
import { unreadableIncludes } from "./includes.ts";
import { type LoadedLibrary, libraryPath, type ModSecurityLibrary, openLibrary } from "./library.ts";

/** A built rule set, shared by the compiled routes whose directives are the same. */
export interface RuleSet {
  readonly pointer: Pointer;
  /** Rules the engine loaded. */
  readonly rules: number;
  /** Compiled routes holding it; at 0 it is freed. */
  holders: number;
  freed: boolean;
}

/** A pointer an engine call returned (bun:ffi types it loosely), NULL as null. */
export function asPointer(p: unknown): Pointer | null {
  return p === null || p === undefined || p === 0 || p === 0n ? null : (Number(p) as Pointer);
}

/** NUL-terminated bytes for a `char *` argument. */
export function cText(s: string): Buffer {
  return Buffer.from(`${s}\0`, "utf8");
}

/** The id of a rule match message (`[id "942100"]`). */
const RULE_ID = /\[id "(\d+)"\]/;
/** Rule ids kept per transaction for the log line: matches past this are not named. */
const MAX_NAMED_RULES = 32;

export class WafEngine {
  readonly msc: ModSecurityLibrary;
  readonly free: (p: Pointer) => void;
  readonly instance: Pointer;
  /** The ids of the rules that matched during the current transaction (the engine's log callback). */
  matchedRules: string[] = [];
  private readonly onMessage: JSCallback;
  private readonly sets = new Map<string, RuleSet>();

  constructor(lib: Exclude<LoadedLibrary, { error: string }>) {
    this.msc = lib.msc;
    this.free = (p) => lib.libc.free(p);
    const instance = asPointer(this.msc.msc_init());
    if (instance === null) throw new Error("msc_init returned NULL");
    this.instance = instance;
    this.msc.msc_set_connector_info(instance, cText("gatehouse"));
    // Called synchronously inside the engine's calls, on this thread; without it the library writes
    // every match to stderr. Only the rule id is kept: the request's log line names them.
    this.onMessage = new JSCallback(
      (_data: Pointer | null, message: Pointer | null) => {
        if (message === null || this.matchedRules.length >= MAX_NAMED_RULES) return;
        const id = RULE_ID.exec(new CString(message).toString())?.[1];
        if (id !== undefined) this.matchedRules.push(id);
      },
      { args: [FFIType.ptr, FFIType.ptr], returns: FFIType.void },
    );
    this.msc.msc_set_log_cb(instance, this.onMessage.ptr);
  }

  /** The rule set for these directives (built once, then shared), held once more; or why it failed. */
  acquire(directives: string): RuleSet | { error: string } {
    let set = this.sets.get(directives);
    if (set === undefined) {
      const built = this.build(directives);
      if ("error" in built) return built;
      set = built;
      this.sets.set(directives, set);
    }
    set.holders++;
    return set;
  }

  /** A holder let go of `set`; the last one frees it (compiled.ts calls this once the route is gone). */
  release(directives: string, set: RuleSet): void {
    set.holders--;
    if (set.holders > 0 || set.freed) return;
    set.freed = true;
    if (this.sets.get(directives) === set) this.sets.delete(directives);
    this.msc.msc_rules_cleanup(set.pointer);
  }

  /** Rule sets alive now (tests, the soak). */
  get ruleSets(): number {
    return this.sets.size;
  }

  private build(directives: string): RuleSet | { error: string } {
    const unreadable = unreadableIncludes(directives);
    if (unreadable.length > 0)
      return { error: `the rule set did not load: no readable file for ${unreadable.join(", ")}` };
    const pointer = asPointer(this.msc.msc_create_rules_set());
    if (pointer === null) return { error: "msc_create_rules_set returned NULL" };
    const errorOut = new BigUint64Array(1);
    const added = this.msc.msc_rules_add(pointer, cText(directives), ptr(errorOut));
    if (added < 0) {
      const at = asPointer(errorOut[0]);
      const why = at === null ? "unknown error" : new CString(at).toString().trim();
      if (at !== null) this.free(at);
      this.msc.msc_rules_cleanup(pointer);
      return { error: `the rule set did not load: ${why}` };
    }
    return { pointer, rules: added, holders: 0, freed: false };
  }
}

/** The engine of each library path opened (one in production; tests also name a missing one). */
const engines = new Map<string, WafEngine>();

/**
 * The process's engine, created when a route first asks for a WAF; or why there is none. A library that
 * could not be opened is not retried (library.ts keeps the failure), so a reload costs nothing.
 */
export function wafEngine(path: string = libraryPath()): WafEngine | { error: string } {
  const known = engines.get(path);
  if (known !== undefined) return known;
  const lib = openLibrary(path);
  if ("error" in lib) return lib;
  try {
    const engine = new WafEngine(lib);
    engines.set(path, engine);
    return engine;
  } catch (err) {
    return { error: `libmodsecurity3 did not start: ${(err as Error).message}` };
  }
}
