/** Which edits are held after a send, and how their marks are recognised. */
import { heldKey, isMarkFill, MARK_FILL, releasedHeld, type HeldCell } from "../../src/records/held";
import { heldAfterSend } from "../../src/records/send";
import { parseBaseline, buildBaseline, serializeBaseline } from "../../src/records/baseline";
import type { ChangeOutcome } from "../../src/records/send";
import type { Change } from "../../src/records/diff";

const change = (projectToken: string, field: string, validation: Change["validation"]): Change => ({ row: 1, projectToken, field, old: "1", new: "2", validation });

describe("heldAfterSend", () => {
  const outcomes: ChangeOutcome[] = [
    { change: change("pt_1", "A", { status: "valid" }), result: { status: "saved", stored: "2" } },
    { change: change("pt_1", "B", { status: "invalid", message: "bad number" }), result: { status: "not-sent", message: "Not sent: bad number" } },
    { change: change("pt_2", "A", { status: "conflict", message: "changed on the service" }), result: { status: "not-sent", message: "x" } },
    { change: change("pt_3", "A", { status: "valid" }), result: { status: "rejected", message: "400 unknown field" } },
    { change: change("pt_4", "A", { status: "valid" }), result: { status: "not-sent", message: "Not sent: cancelled." } },
    { change: change("pt_5", "title", { status: "ignored", message: "Not a custom field" }), result: { status: "not-sent", message: "Not a custom field" } },
  ];
  it("holds every change that was not saved, with why and the service's value", () => {
    expect(heldAfterSend(outcomes).map((h) => [h.projectToken, h.field, h.status, h.message, h.service, h.fill])).toEqual([
      ["pt_1", "B", "invalid", "bad number", "1", null],
      ["pt_2", "A", "conflict", "changed on the service", "1", null],
      ["pt_3", "A", "rejected", "400 unknown field", "1", null],
      ["pt_4", "A", "not-sent", "Not sent: cancelled.", "1", null],
      ["pt_5", "title", "ignored", "Not a custom field", "1", null],
    ]);
  });
  it("a cell held again keeps the own fill recorded under its mark", () => {
    const prev: HeldCell[] = [{ projectToken: "pt_1", field: "B", status: "invalid", message: "m", service: "1", fill: { pattern: "Solid", color: "#00B050" } }];
    expect(heldAfterSend(outcomes, prev)[0].fill).toEqual({ pattern: "Solid", color: "#00B050" });
  });
  it("releasedHeld returns the held cells no longer changed", () => {
    const held = heldAfterSend(outcomes);
    expect(releasedHeld(held, new Set([heldKey("pt_1", "B")])).map((h) => h.projectToken)).toEqual(["pt_2", "pt_3", "pt_4", "pt_5"]);
  });
});

describe("marks and the stored record", () => {
  it("recognises only the add-in's own solid fill as its mark", () => {
    expect(isMarkFill({ pattern: "Solid", color: MARK_FILL.toLowerCase() })).toBe(true);
    expect(isMarkFill({ pattern: "Solid", color: "#00B050" })).toBe(false);
    expect(isMarkFill({ pattern: "None" })).toBe(false);
    expect(isMarkFill(null)).toBe(false);
  });
  it("held cells round-trip through the import record, and a bad one is refused", () => {
    const b = buildBaseline({ columns: ["project_token", "A"], rows: [["pt_1", 1]] }, { bindingId: "b", tableName: "T", etag: null, tokenColumn: "project_token" });
    const held: HeldCell[] = [{ projectToken: "pt_1", field: "A", status: "conflict", message: "m", service: null, fill: { pattern: "None" } }];
    expect(parseBaseline(serializeBaseline({ ...b, held })).held).toEqual(held);
    expect(() => parseBaseline({ ...b, held: [{ ...held[0], fill: { pattern: "Solid", color: "red" } }] })).toThrow(/held\.0\.fill/);
    // Records written before held cells existed still read.
    expect(parseBaseline(JSON.stringify(b)).held).toBeUndefined();
  });
});
