/**
 * The folder source: a folder of Kubernetes YAML turned into a `ResourceSnapshot`, and kept in sync.
 * The rules (which files, duplicates, namespaces, last-good fallbacks) are in docs/folder-source.md.
 */
export type { FileMemory, FolderLoad, SkippedObject, SourceError } from "./assemble.ts";
export { clusterScopedKinds } from "./documents.ts";
export { FolderSource, type FolderSourceOptions } from "./folder-source.ts";
export { loadFiles, loadFolder, logLoad, readFolder } from "./load.ts";
export { type LoadProblem, loadProblems } from "./problems.ts";
