/**
 * Host names as the door compares them: the hostname of a request's Host header, and the entries
 * of GATEWAY_ALLOWED_HOSTS brought to that same form when the config is read (config.ts), so that
 * an entry written with a port or in IPv6 brackets matches too.
 */
import { isIP } from 'node:net';

/** The hostname of a Host header (`[::1]:7387` → `::1`, `laptop:7387` → `laptop`), lower-case. */
export function hostnameOf(host: string | undefined): string | undefined {
  if (!host) return undefined;
  const h = host.trim().toLowerCase();
  if (h.startsWith('[')) {
    const end = h.indexOf(']');
    return end > 0 ? h.slice(1, end) : undefined;
  }
  const colon = h.indexOf(':');
  return colon >= 0 ? h.slice(0, colon) : h;
}

/** `name`, `name:port`, `[v6]` or `[v6]:port`: what a Host header may carry. */
const HOST_ENTRY = /^(\[[0-9a-f:.]+\]|[a-z0-9_-]+(\.[a-z0-9_-]+)*\.?)(:\d{1,5})?$/;

/**
 * An entry of GATEWAY_ALLOWED_HOSTS as `hostnameOf` gives a request's Host (`Laptop.home:7387` →
 * `laptop.home`, `[fd00::1]:7387` → `fd00::1`; a bare IPv6 address is taken as it is): the port is
 * no part of the comparison. Undefined for anything else (a URL, a path, a wildcard).
 */
export function allowedHostName(entry: string): string | undefined {
  const e = entry.trim().toLowerCase();
  if (isIP(e) === 6) return e;
  if (!HOST_ENTRY.test(e)) return undefined;
  const name = hostnameOf(e);
  return name && (!e.startsWith('[') || isIP(name) === 6) ? name : undefined;
}
