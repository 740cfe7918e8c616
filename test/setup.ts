/**
 * Preloaded by `bun test` (bunfig.toml). Every test runs with the translator's self-check on: each
 * reuse of a kept HTTPRoute translation is compared with a fresh one and throws when they differ
 * (src/translate/gateway/httproute/memo.ts); every file read with Bun.YAML and every dump printed
 * without the yaml package is compared with the package's own reading and printing
 * (src/sources/file/native-yaml.ts, src/model/yaml-text.ts). Gateways the tests start as processes
 * inherit it.
 */
process.env.GATEHOUSE_TRANSLATE_CHECK = "1";
