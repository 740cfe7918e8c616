/** What every bench section gets from the runner. */
import type { Processes } from "./procs.ts";

export interface BenchSettings {
  /** A tiny run of each section that proves the harness works (CI); its figures mean nothing. */
  readonly smoke: boolean;
  readonly rounds: number;
  /** wrk duration per round. */
  readonly seconds: number;
  readonly connections: number;
  /** Worker counts measured in the proxy and https sections (N=1 and N=cores by default). */
  readonly workerCounts: readonly number[];
  /** Also measure the floor rows (bench/floor/: a Bun byte pipe, and that pipe with our HTTP parsing). */
  readonly floor: boolean;
  /** Proxy requests carry Host only, or a browser's fields too (routes.ts BROWSER_FIELDS). */
  readonly fields: "host" | "browser";
  readonly cores: number;
}

export interface BenchContext {
  readonly settings: BenchSettings;
  readonly procs: Processes;
  /** A scratch folder removed after the run; sections make their own subfolders. */
  readonly work: string;
  /** The shared upstream (bench/backend.ts). */
  readonly backendPort: number;
}
