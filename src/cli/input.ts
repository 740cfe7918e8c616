/**
 * What `translate` and `routes` read: manifest files (`-f`), or a cluster read once (`--kube`, with
 * `--kubeconfig FILE` or the usual kubeconfig lookup). Both end as a snapshot plus the problems of what
 * could not be loaded, and the exit code those alone deserve: 2 when a whole file (or the cluster) could not
 * be used, 1 when some object (or some kind) could not be, else 0.
 */
import type { Problem } from "../model/index.ts";
import type { ResourceSnapshot } from "../sources/snapshot.ts";

export type InputSource =
  | { readonly kind: "files"; readonly files: readonly string[] }
  | { readonly kind: "kube"; readonly kubeconfig?: string };

export interface LoadedInput {
  readonly snapshot: ResourceSnapshot;
  readonly problems: readonly Problem[];
  /** Lines for stderr: what the answer is missing. */
  readonly notes: readonly string[];
  readonly exitCode: 0 | 1 | 2;
}

export async function loadInput(source: InputSource, command: string): Promise<LoadedInput> {
  if (source.kind === "files") {
    // Not the folder source's index: its watcher is for serve.
    const { loadFiles } = await import("../sources/file/load.ts");
    const { loadProblems } = await import("../sources/file/problems.ts");
    const load = await loadFiles(source.files);
    const n = load.errors.length;
    return {
      snapshot: load.snapshot,
      problems: loadProblems(load),
      notes: n === 0 ? [] : [`gatehouse ${command}: ${n} load problem${n === 1 ? "" : "s"} (see problems)`],
      exitCode: n === 0 ? 0 : load.errors.some((e) => e.docIndex === -1) ? 2 : 1,
    };
  }
  const { KubeClient, loadKubeConfig } = await import("../sources/kubernetes/client.ts");
  const { readClusterOnce } = await import("../sources/kubernetes/list-once.ts");
  const { invalidProblems } = await import("../sources/kubernetes/invalid-status.ts");
  const { emptySnapshot } = await import("../sources/snapshot.ts");
  let read: Awaited<ReturnType<typeof readClusterOnce>>;
  try {
    read = await readClusterOnce(new KubeClient(loadKubeConfig(source.kubeconfig)));
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    return {
      snapshot: emptySnapshot,
      problems: [],
      notes: [`gatehouse ${command}: cannot read the cluster: ${why}`],
      exitCode: 2,
    };
  }
  const notes = read.unavailable.map((u) => `gatehouse ${command}: not read (left out): ${u}`);
  const problems = invalidProblems(read.invalid);
  if (problems.length > 0)
    notes.push(
      `gatehouse ${command}: ${problems.length} object${problems.length === 1 ? "" : "s"} left out as invalid (see problems)`,
    );
  return { snapshot: read.snapshot, problems, notes, exitCode: notes.length === 0 ? 0 : 1 };
}
