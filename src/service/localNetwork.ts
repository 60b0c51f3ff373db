/**
 * Why a request failed at the network level, said as exactly as the platform lets us (issue #25).
 *
 * - **Node** (the CLI) knows: undici's `fetch failed` carries the system error as its `cause`
 *   (`ECONNREFUSED`, `ENOTFOUND`, `UND_ERR_CONNECT_TIMEOUT`, a TLS certificate code, …), so the
 *   message names it: refused, name not found, timed out, certificate, not TLS, closed, no route.
 * - **A browser** never says why (`TypeError: Failed to fetch` for a stopped service, a wrong port,
 *   a CORS refusal, a blocked request alike), so the message says only that the service could not
 *   be reached, and the possible causes go into the error's details (shown behind a toggle).
 * - **Local Network Access** (Chrome 142+, Edge 140+; WICG local-network-access; office-js #6281)
 *   blocks a page from reaching a MORE private address space than its own, unless allowed: a public
 *   page → a private (10.x, 192.168.x, …) or local (localhost) address, or a private page → a local
 *   one. Only then does the message speak of it. The browser preview on localhost calling a service
 *   on localhost is not such a case; neither is the CLI (Node has no such block).
 */

/** Address spaces of Local Network Access, most private first. */
export type AddressSpace = "local" | "private" | "public";

/** The address space a host name or IP literal is in, as far as its text tells (a name that resolves to a private address counts as public here). */
export function addressSpace(hostname: string): AddressSpace {
  const h = hostname.toLowerCase().replace(/^\[|\]$/g, "");
  if (h === "localhost" || h.endsWith(".localhost") || h === "::1" || h === "0.0.0.0") return "local";
  if (h.endsWith(".local") || /^f[cd][0-9a-f]{2}:/.test(h) || /^fe80:/.test(h)) return "private";
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(h);
  if (!m) return "public";
  const [a, b] = [Number(m[1]), Number(m[2])];
  if (a === 127 || a === 0) return "local";
  return a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || (a === 169 && b === 254) ? "private" : "public";
}

/** True for loopback, private (RFC 1918), link-local, unique-local IPv6 and `.local` hosts. */
export function isLocalNetworkHost(hostname: string): boolean {
  return addressSpace(hostname) !== "public";
}

const RANK: Record<AddressSpace, number> = { local: 0, private: 1, public: 2 };

/**
 * Whether Local Network Access applies to a request from a page at `pageOrigin` to `targetUrl`: the
 * target is in a more private address space than the page. No page (Node) or an unreadable URL: no.
 */
export function localNetworkAccessApplies(pageOrigin: string | undefined, targetUrl: string): boolean {
  if (!pageOrigin) return false;
  try {
    return RANK[addressSpace(new URL(targetUrl).hostname)] < RANK[addressSpace(new URL(pageOrigin).hostname)];
  } catch {
    return false;
  }
}

/** The origin of the page the code runs in (a browser or webview), or undefined in Node. */
export function currentPageOrigin(): string | undefined {
  const origin = (globalThis as { location?: { origin?: unknown } }).location?.origin;
  return typeof origin === "string" && /^https?:\/\//.test(origin) ? origin : undefined;
}

/** What a network-level failure was, when the platform says. */
export type NetworkCause = "refused" | "name_not_found" | "timed_out" | "certificate" | "not_tls" | "closed" | "no_route" | "unknown";

const TLS_CERT_CODES = /^(?:CERT_|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_(?:VERIFY_LEAF_SIGNATURE|GET_ISSUER_CERT|GET_ISSUER_CERT_LOCALLY|DECRYPT_CERT_SIGNATURE)|ERR_TLS_CERT_ALTNAME_INVALID|HOSTNAME_MISMATCH|ERR_SSL_TLSV1_ALERT_UNKNOWN_CA)/;

/** The system error codes in an error and its causes (undici nests them; Happy Eyeballs gives an AggregateError). */
function codesOf(e: unknown, depth = 0): string[] {
  if (!e || typeof e !== "object" || depth > 4) return [];
  const o = e as { code?: unknown; cause?: unknown; errors?: unknown };
  const own = typeof o.code === "string" ? [o.code] : [];
  const nested = Array.isArray(o.errors) ? o.errors.flatMap((x) => codesOf(x, depth + 1)) : [];
  return [...own, ...nested, ...codesOf(o.cause, depth + 1)];
}

/** Classifies a failed `fetch` by the system error it carries; "unknown" when it carries none (browsers). */
export function networkCause(e: unknown): NetworkCause {
  const codes = codesOf(e);
  const has = (...want: string[]) => codes.some((c) => want.includes(c));
  if (has("ECONNREFUSED")) return "refused";
  if (has("ENOTFOUND", "EAI_AGAIN", "EAI_NONAME", "EAI_FAIL")) return "name_not_found";
  if (has("UND_ERR_CONNECT_TIMEOUT", "ETIMEDOUT", "ESOCKETTIMEDOUT")) return "timed_out";
  if (codes.some((c) => TLS_CERT_CODES.test(c))) return "certificate";
  if (has("ERR_SSL_WRONG_VERSION_NUMBER", "EPROTO")) return "not_tls";
  if (has("EHOSTUNREACH", "ENETUNREACH", "EHOSTDOWN", "ENETDOWN")) return "no_route";
  if (has("ECONNRESET", "UND_ERR_SOCKET", "EPIPE", "UND_ERR_CLOSED")) return "closed";
  return "unknown";
}

/** The message and action for a network failure of `cause` towards `host` (`url` for the Local Network Access rule). */
export function networkFailureText(cause: NetworkCause, host: string, url: string, pageOrigin: string | undefined): { message: string; action: string; lna: boolean } {
  const name = host.replace(/:\d+$/, "");
  const lna = cause === "unknown" && localNetworkAccessApplies(pageOrigin, url);
  switch (cause) {
    case "refused":
      return { lna, message: `Could not reach ${host}: the connection was refused (nothing is listening there).`, action: "Check that the service is running and that the address and port are right, then retry." };
    case "name_not_found":
      return { lna, message: `Could not reach ${host}: the name ${name} was not found.`, action: "Check the spelling of the environment address; on a company network, check that you are connected (VPN), then retry." };
    case "timed_out":
      return { lna, message: `Could not reach ${host}: the connection timed out.`, action: "Check the network connection (VPN, firewall, proxy) and the address, then retry." };
    case "certificate":
      return {
        lna,
        message: `Could not reach ${host}: its TLS certificate was not accepted.`,
        action: "If the service uses your company's own certificate authority, make it trusted (for the command line: NODE_EXTRA_CA_CERTS=/path/to/ca.pem); otherwise ask the service's administrator about the certificate.",
      };
    case "not_tls":
      return { lna, message: `Could not reach ${host}: it did not answer over https (TLS).`, action: "Check the scheme and port of the environment address (an http service on that port?)." };
    case "no_route":
      return { lna, message: `Could not reach ${host}: there is no network route to it.`, action: "Check the network connection (VPN, Wi-Fi) and the address, then retry." };
    case "closed":
      return { lna, message: `${host} closed the connection before answering.`, action: "Retry; if it keeps happening, something between you and the service (a proxy, a firewall) is cutting the connection, or the service is restarting." };
    case "unknown":
      if (lna) {
        return {
          lna,
          message: `Could not reach ${host}. The browser may have blocked it: this page is on ${new URL(pageOrigin!).host}, and ${host} is on this computer or a private network (Local Network Access).`,
          action: "Allow \"local network access\" when the browser asks (or in the site's settings), or ask your administrator to allow the add-in's origin with the LocalNetworkAccessAllowedForUrls policy.",
        };
      }
      return { lna, message: `Could not reach ${host}; the browser does not say why.`, action: "Check that the service is running and that the environment address is right, then retry." };
  }
}

/** Possible causes of a failure the browser does not explain (details behind the pane's toggle). */
export const UNKNOWN_CAUSES = [
  "the service is stopped or restarting",
  "the address or port is wrong",
  "this computer is offline, or a VPN or proxy is needed",
  "the service does not allow requests from this add-in's origin (CORS)",
];
