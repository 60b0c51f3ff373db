// The add-in's Content-Security-Policy (issue #22), in one place: the production build writes it
// into every page as a <meta> tag, the dev server and the e2e suite's server send it as a header,
// and the README prints it for administrators (`node scripts/csp.js` prints it too).
//
// Why each directive (see also README, "Content-Security-Policy"):
// - script-src: the add-in's own files and Office.js from Microsoft's CDN (the store requires the
//   CDN); no inline script, no eval (zod runs `jitless`, webpack's chunk loader uses a Trusted
//   Types policy).
// - style-src 'self': stylesheets from the add-in's own files only. Constructable stylesheets
//   (Fluent UI's) and styles set through the CSSOM (`el.style.x = …`) are not inline styles.
// - connect-src: the environments (https only; plain http is allowed for localhost environments
//   only, as the connection form allows it) and, in development, the reference service.
// - frame-src: the summary dialog in the browser preview (own origin), and Office.js's own trust
//   prompt (AgaveErrorUX on appsforoffice.microsoft.com), which it frames for an unknown host.
// - require-trusted-types-for 'script' with exactly three policies: "default" (trusted-types.js:
//   lets Office.js add its own host scripts from the CDN, nothing else), webpack's chunk loader
//   and FAST's (Fluent UI's) template policy.
// - No frame-ancestors: Office frames the add-in from hosts that differ per platform and cloud; a
//   list here would break Office (and a <meta> tag cannot carry it anyway). See the README.
"use strict";

/** Trusted Types policy names the add-in creates. */
const TRUSTED_TYPES_POLICIES = {
  /** trusted-types.js: script URLs for Office.js (CDN) and the add-in's own files, nothing else. */
  default: "default",
  /** webpack's `output.trustedTypes.policyName`: its chunk loader's script URLs. */
  webpack: "ppm-webpack",
  /** @microsoft/fast-element (Fluent UI web components) creates this one for its templates. */
  fast: "fast-html",
};

const OFFICE_CDN = "https://appsforoffice.microsoft.com";

/**
 * The policy text. `connect` lists extra connect-src sources (development: the reference
 * service's origin, or `http://localhost:*`); production allows https environments and plain http
 * on the loopback addresses the connection form accepts.
 */
function contentSecurityPolicy({ connect = [] } = {}) {
  // No "http://[::1]:*": CSP host sources cannot name IPv6 addresses (Chromium ignores it as invalid);
  // the connection form refuses plain http to an IPv6 address and suggests http://localhost instead.
  const connectSrc = ["'self'", "https:", "http://localhost:*", "http://127.0.0.1:*", ...connect];
  return [
    "default-src 'none'",
    `script-src 'self' ${OFFICE_CDN}`,
    "style-src 'self'",
    "img-src 'self' data:",
    `connect-src ${[...new Set(connectSrc)].join(" ")}`,
    `frame-src 'self' ${OFFICE_CDN}`,
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "require-trusted-types-for 'script'",
    `trusted-types ${Object.values(TRUSTED_TYPES_POLICIES).join(" ")}`,
  ].join("; ");
}

/** Escapes text for a double-quoted HTML attribute. */
function attr(text) {
  return String(text).replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");
}

/**
 * Puts the policy into a page as `<meta http-equiv="Content-Security-Policy">`, right after the
 * charset declaration (it must come before any script or style it governs). Throws when the page
 * has no `<head>`, or already has a policy.
 */
function withCspMeta(html, policy) {
  if (/http-equiv=["']?Content-Security-Policy/i.test(html)) throw new Error("the page already has a Content-Security-Policy meta tag");
  const tag = `<meta http-equiv="Content-Security-Policy" content="${attr(policy)}" />`;
  const charset = /<meta\s+charset=[^>]*>/i;
  if (charset.test(html)) return html.replace(charset, (m) => `${m}\n  ${tag}`);
  if (/<head[^>]*>/i.test(html)) return html.replace(/<head[^>]*>/i, (m) => `${m}\n  ${tag}`);
  throw new Error("the page has no <head> to put the Content-Security-Policy in");
}

/**
 * What a page must not contain under the policy: inline scripts, inline styles, style attributes,
 * inline event handlers, `javascript:` URLs. Returns one line per finding (empty when clean).
 */
function inlineContent(html) {
  const found = [];
  for (const m of html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)) {
    if (!/\bsrc\s*=/i.test(m[1]) && m[2].trim() !== "") found.push(`inline <script>: ${m[2].trim().slice(0, 60)}`);
  }
  if (/<style\b/i.test(html)) found.push("inline <style>");
  for (const m of html.matchAll(/<[a-z][^>]*\sstyle\s*=/gi)) found.push(`style attribute: ${m[0].slice(0, 60)}`);
  for (const m of html.matchAll(/<[a-z][^>]*\son[a-z]+\s*=/gi)) found.push(`inline event handler: ${m[0].slice(0, 60)}`);
  if (/javascript:/i.test(html)) found.push("javascript: URL");
  return found;
}

module.exports = { TRUSTED_TYPES_POLICIES, OFFICE_CDN, contentSecurityPolicy, withCspMeta, inlineContent };

if (require.main === module) console.log(contentSecurityPolicy());
