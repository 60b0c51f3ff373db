/**
 * The request header the reference service's control hooks require (issue #36; why: control.ts).
 * A module of its own, with no imports, so the self-test page can send it without bundling the
 * service. The browser preview's toolbar (src/dev/preview-controls.ts, which may not import the
 * service) spells the same two values.
 */
export const CONTROL_HEADER = "X-PPM-Control";
export const CONTROL_HEADER_VALUE = "1";
