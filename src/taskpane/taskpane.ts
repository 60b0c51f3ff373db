/* Task pane entry: Office wiring only. */
declare const __PPM_DEFAULT_SERVICE_URL__: string;

Office.onReady((info) => {
  const status = document.getElementById("status");
  if (!status) return;
  const target = __PPM_DEFAULT_SERVICE_URL__ || "no environment configured yet";
  status.textContent = `Host: ${info.host ?? "none"} · environment: ${target}`;
});
