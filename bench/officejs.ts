/**
 * Microsoft's Excel client library for the bench's Node processes: imported first by every bench
 * file that runs the workbook emulator, so the library loads into this process's realm on first use
 * (scripts/officejs.js; PPM_EXCEL_PROFILE picks the platform profile, web by default).
 */
import { createRequire } from "module";

const load = createRequire(__filename);
(load("../scripts/officejs.js") as { installInThisRealm(options?: { profile?: string }): void }).installInThisRealm();
