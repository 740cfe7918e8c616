/**
 * A TLS SNI name as the SNI table (h2/sni.ts) picks a context by it and client-certificate checks compare
 * it with the routed host: lower-case, one trailing dot removed (as `normaliseHost` does for `Host`).
 */
export function normaliseServername(name: string): string {
  const lower = name.toLowerCase();
  return lower.endsWith(".") ? lower.slice(0, -1) : lower;
}
