/** Host name comparisons convert needs (Gateway API listener hostnames against route hostnames). */

/**
 * Whether a listener hostname covers a route's host: equal, or a `*.` wildcard whose suffix the host ends
 * with (any number of labels, as Gateway API listeners match). A wildcard route host is covered by an
 * equal or broader wildcard only.
 */
export function hostMatches(listenerHost: string, host: string): boolean {
  if (listenerHost === host) return true;
  if (!listenerHost.startsWith("*.")) return false;
  const suffix = listenerHost.slice(1);
  return host.endsWith(suffix) && host.length > suffix.length;
}
