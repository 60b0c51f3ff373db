/**
 * Local Network Access (LNA): current Chrome (141/142+) and Edge (140+) block a page from reaching
 * localhost or a private address unless the user allowed it in a prompt or an admin allowed the page's
 * origin (policy `LocalNetworkAccessAllowedForUrls`; office-js #6281; WICG local-network-access). To
 * the page the block looks like any network failure (`TypeError: Failed to fetch`), so the add-in
 * says so whenever a request to such an address fails at the network level.
 */

/** True for loopback, private (RFC 1918), link-local, unique-local IPv6 and `.local` hosts. */
export function isLocalNetworkHost(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/^\[|\]$/g, "");
  if (h === "localhost" || h.endsWith(".localhost") || h.endsWith(".local")) return true;
  if (h === "::1" || /^f[cd][0-9a-f]{2}:/.test(h) || /^fe80:/.test(h)) return true;
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(h);
  if (!m) return false;
  const [a, b] = [Number(m[1]), Number(m[2])];
  return a === 127 || a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || (a === 169 && b === 254) || a === 0;
}

/** The sentence added to a network failure towards a local or private address. */
export const LOCAL_NETWORK_HINT =
  "The address is on this computer or a private network: Chrome and Edge block such requests from web pages (Local Network Access) unless allowed. Allow \"local network access\" when the browser asks (or in the site's settings), or ask your administrator to allow the add-in's origin with the LocalNetworkAccessAllowedForUrls policy (see the README's admin guide).";

/** A network failure's message, with the Local Network Access hint when the target is local or private. */
export function withLocalNetworkHint(message: string, url: string): string {
  let host = "";
  try {
    host = new URL(url).hostname;
  } catch {
    return message;
  }
  return isLocalNetworkHost(host) ? `${message} ${LOCAL_NETWORK_HINT}` : message;
}
