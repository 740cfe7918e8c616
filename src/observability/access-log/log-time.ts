/**
 * nginx's time variables, in the process's local time zone as nginx writes them (a container's is
 * usually UTC): `$time_local` `01/Dec/2026:21:28:45 +0000`, `$time_iso8601` `2026-12-01T21:28:45+00:00`,
 * `$msec` `1796160525.123`. The two texts change once a second, so they are made once a second.
 */

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

let second = Number.NaN;
let local = "";
let iso = "";

function two(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}

/** The zone offset as `+hhmm`, or `+hh:mm` with `colon`. */
function zone(d: Date, colon: boolean): string {
  const minutes = -d.getTimezoneOffset();
  const abs = Math.abs(minutes);
  return `${minutes < 0 ? "-" : "+"}${two(Math.floor(abs / 60))}${colon ? ":" : ""}${two(abs % 60)}`;
}

function refresh(now: number): void {
  const s = Math.floor(now / 1000);
  if (s === second) return;
  second = s;
  const d = new Date(s * 1000);
  const clock = `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;
  const year = d.getFullYear();
  local = `${two(d.getDate())}/${MONTHS[d.getMonth()]}/${year}:${clock} ${zone(d, false)}`;
  iso = `${year}-${two(d.getMonth() + 1)}-${two(d.getDate())}T${clock}${zone(d, true)}`;
}

/** `$time_local` at `now` (ms since the epoch). */
export function timeLocal(now: number): string {
  refresh(now);
  return local;
}

/** `$time_iso8601` at `now`. */
export function timeIso8601(now: number): string {
  refresh(now);
  return iso;
}

/** `$msec`: seconds since the epoch with millisecond resolution. */
export function msec(now: number): string {
  return (now / 1000).toFixed(3);
}
