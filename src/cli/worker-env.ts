/**
 * Environment variables a `--workers` primary sets for its workers that are not serve flags (main.ts
 * keeps them out of the GATEHOUSE_<FLAG> check). Here, apart from what reads them, so `translate` loads
 * none of serve to know their names.
 */

/** The primary's session key, base64 (cli/session-key-setup.ts): its workers sign and verify alike. */
export const WORKER_SESSION_KEY_ENV = "GATEHOUSE_WORKER_SESSION_KEY";
