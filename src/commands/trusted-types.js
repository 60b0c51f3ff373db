// The Trusted Types "default" policy of every add-in page that loads Office.js (taskpane.html,
// commands.html, summary.html). Loaded first, before Office.js, as a plain script.
//
// The pages' Content-Security-Policy requires Trusted Types for script sinks (scripts/csp.js).
// Office.js is not written for that: it adds its host-specific files with `script.src = url`,
// which the browser would refuse. A policy named "default" is what the browser asks then. This
// one lets through exactly what script-src allows anyway, script URLs on Office's CDN and on the
// add-in's own origin, and nothing else: no HTML, no script text, no other origin (returning
// undefined refuses the assignment and reports it as a violation).
(function () {
  "use strict";
  var tt = window.trustedTypes;
  if (!tt || typeof tt.createPolicy !== "function") return;
  var allowed = ["https://appsforoffice.microsoft.com", window.location.origin];
  try {
    tt.createPolicy("default", {
      createScriptURL: function (value) {
        var url;
        try {
          url = new URL(String(value), document.baseURI);
        } catch {
          return undefined;
        }
        return allowed.indexOf(url.origin) >= 0 ? url.href : undefined;
      },
    });
  } catch {
    // A default policy exists already (a second copy of this file): keep the first one.
  }
})();
