/**
 * Replays a transcript on the emulated host (`answerRequest`, the host's one door), starting from a
 * new workbook with the transcript's starting sheets, on the platform profile it was recorded on.
 */
import { WorkbookModel } from "../../emulator/model";
import { answerRequest } from "../../emulator/host";
import { isProfileId, type ProfileId } from "../../emulator/profiles";
import { replayTranscript, type ReplayReport } from "../core/replay";
import type { Transcript } from "../core/transcript";

/** The profile of the host a transcript was recorded on (`Office.context.diagnostics.platform`). */
export function profileOf(t: Transcript): ProfileId {
  if (t.host.profile && isProfileId(t.host.profile)) return t.host.profile;
  const p = t.host.platform.toLowerCase();
  return p === "mac" ? "mac" : p === "pc" ? "windows" : "web";
}

export function replayOnEmulatedHost(t: Transcript, profile: ProfileId = profileOf(t)): Promise<ReplayReport> {
  const year = Number(t.recordedAt.slice(0, 4));
  const [first, ...more] = t.workbook.sheets;
  const wb = new WorkbookModel({ platform: profile, firstSheetName: first ?? "Sheet1", date1904: t.workbook.date1904 === true, ...(Number.isInteger(year) ? { currentYear: year } : {}) });
  for (const name of more) wb.addSheet(name);
  return replayTranscript(t, (request) => answerRequest(wb, request));
}
