/**
 * PLACEHOLDER created by the task pane shell so the Records tab has something to mount. The
 * Records module (issue 7) replaces this file; keep the `mountRecords` export and its signature
 * (see `../recordsHost.ts`).
 */
import type { MountRecords } from "../recordsHost";

export const mountRecords: MountRecords = (container) => {
  const section = document.createElement("section");
  section.dataset.testid = "records-root";
  const p = document.createElement("p");
  p.textContent = "Records: coming soon.";
  section.appendChild(p);
  container.replaceChildren(section);
};
