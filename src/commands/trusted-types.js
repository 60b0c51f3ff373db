// The Trusted Types "default" policy of every add-in page that loads Office.js (taskpane.html,
// commands.html, summary.html). Loaded first, before Office.js, as a plain script.
//
// The pages' Content-Security-Policy requires Trusted Types for script sinks (scripts/csp.js).
// Office.js is not written for that, and a policy named "default" is what the browser asks when
// code hands a plain string to a sink. This one lets through exactly what Office's own files need
// and nothing else (returning undefined refuses the string and reports a violation):
//
// - script URLs (createScriptURL): Office.js adds its host-specific files with `script.src = url`.
//   Allowed: what script-src allows anyway, Office's CDN and the add-in's own origin.
// - HTML (createHTML, issue #36), two narrow cases, checked in real Chromium with Microsoft's own
//   excel-web-16.00.js and excel-win32-16.01.js (test/e2e/journeys/security.ts, docs/security.md):
//   1. `DOMParser.parseFromString` of the host's token at start-up (Office's telemetry reads the
//      attributes of its `<t …/>` element, inside a try): one `t` element with attributes only.
//      A parsed document is inert (its scripts never run) and Office only reads attributes from it.
//      An empty token (a sideloaded add-in's) is handed over as `<t/>`: parsing nothing as XML makes
//      Chromium build an error document with inline styles, which the policy's style-src reports
//      twice per load; `<t/>` gives Office's code the same outcome (no attributes), without them.
//   2. Text without "<" for any other HTML sink: it cannot make an element, only text. This is
//      Office's untrusted-host notice (`document.body.innerHTML = "This add-in has been disabled…"`),
//      which would otherwise throw instead of showing.
//   Anything else (markup from anywhere, e.g. Office's cross-zone dialog notice with its link) is
//   refused and reported.
(function () {
  "use strict";
  var tt = window.trustedTypes;
  if (!tt || typeof tt.createPolicy !== "function") return;
  var allowed = ["https://appsforoffice.microsoft.com", window.location.origin];
  /** Office's host token as its telemetry parses it: one `t` element with quoted attributes only. */
  var OFFICE_TOKEN = /^\s*<t(?:\s+[A-Za-z_:][-\w.:]*\s*=\s*(?:"[^"<]*"|'[^'<]*'))*\s*(?:\/>|>\s*<\/t>)\s*$/;
  function scriptUrl(value) {
    var url;
    try {
      url = new URL(String(value), document.baseURI);
    } catch {
      return undefined;
    }
    return allowed.indexOf(url.origin) >= 0 ? url.href : undefined;
  }
  function officeHtml(value, type, sink) {
    var text = String(value);
    if (sink === "DOMParser parseFromString") {
      if (text.trim() === "") return "<t/>";
      return OFFICE_TOKEN.test(text) ? text : undefined;
    }
    return text.indexOf("<") < 0 ? text : undefined;
  }
  try {
    tt.createPolicy("default", { createScriptURL: scriptUrl, createHTML: officeHtml });
  } catch {
    // A default policy exists already (a second copy of this file): keep the first one.
  }
})();
