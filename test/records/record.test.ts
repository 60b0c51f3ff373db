// jest's own typings: its asymmetric matchers (expect.stringMatching, …) are typed, not `any`.
import { expect } from "@jest/globals";
import { describeRecordError, recordCredentialsProblem, recordKindOfSnapshot } from "../../src/records/client";
import { customFieldColumns, customFieldsFromManifest } from "../../src/records/fields";
import { formBody, formFieldsFromRecord, placeServerError, recordSheetRows, recordView, validateForm, type RecordForm } from "../../src/records/record";
import { PpmError } from "../../src/service/errors";

const FIELDS = [
  { name: "Budget Contingency", numeric: true },
  { name: "Sponsor", numeric: false },
];

describe("record view", () => {
  const view = recordView("project", { project_name: "ERP", project_token: "pt_1", "Budget Contingency": "1500.5", Sponsor: null }, FIELDS);
  it("puts the token first and marks custom fields", () => {
    expect(view.token).toBe("pt_1");
    expect(view.fields.map((f) => [f.name, f.value, f.custom])).toEqual([
      ["project_token", "pt_1", false],
      ["project_name", "ERP", false],
      ["Budget Contingency", "1500.5", true],
      ["Sponsor", null, true],
    ]);
  });
  it("copies to sheet rows as text", () => {
    expect(recordSheetRows(view)[3]).toEqual(["Budget Contingency", "1500.5", "yes"]);
  });
  it("opens the edit form with the record's custom fields", () => {
    expect(formFieldsFromRecord(view)).toEqual([
      { name: "Budget Contingency", numeric: true, value: "1500.5", initial: "1500.5" },
      { name: "Sponsor", numeric: false, value: "", initial: null },
    ]);
  });
});

describe("form rules", () => {
  const form = (over: Partial<RecordForm>): RecordForm => ({
    kind: "project",
    mode: "create",
    token: "",
    fields: [
      { name: "Budget Contingency", numeric: true, value: "", initial: null },
      { name: "Sponsor", numeric: false, value: "", initial: null },
    ],
    ...over,
  });
  it("validates numeric fields as the user types and sends only filled fields on create", () => {
    const f = form({});
    expect(validateForm(f)).toEqual({ fields: {}, form: null });
    expect(formBody(f)).toEqual({});
    f.fields[0].value = "1,234.5";
    expect(validateForm(f).fields["Budget Contingency"]).toMatch(/thousands/i);
    f.fields[0].value = "-0,5";
    f.fields[1].value = " spaced text ";
    expect(validateForm(f).fields).toEqual({});
    expect(formBody(f)).toEqual({ custom_fields: { "Budget Contingency": "-0,5", Sponsor: " spaced text " } });
  });
  it("on update sends only changed fields, and refuses to clear a numeric one", () => {
    const f = form({ mode: "update", token: "pt_1", fields: [
      { name: "Budget Contingency", numeric: true, value: "1500.5", initial: "1500.5" },
      { name: "Sponsor", numeric: false, value: "Dana", initial: "Dana" },
    ] });
    expect(validateForm(f).form).toBe("Nothing changed yet.");
    f.fields[1].value = "Fox";
    expect(formBody(f)).toEqual({ custom_fields: { Sponsor: "Fox" } });
    f.fields[0].value = "";
    expect(validateForm(f).fields["Budget Contingency"]).toMatch(/cannot be cleared/);
    expect(validateForm({ ...f, token: " " }).form).toMatch(/project_token/);
  });
  it("places a service error next to the field it names, else above the form", () => {
    expect(placeServerError({ message: "bad", field: "Sponsor" }, ["Sponsor"])).toEqual({ fields: { Sponsor: "The service refused this value: bad" }, form: null });
    expect(placeServerError({ message: "bad", field: "Other", action: "Fix it." }, ["Sponsor"])).toEqual({ fields: {}, form: "bad Fix it." });
  });
});

describe("client helpers", () => {
  it("reads the field a PpmError blames from its details", () => {
    const e = new PpmError("invalid_custom_field", "The service rejected the changed record (400).", { status: 400, details: { error: "invalid_custom_field", field: "Budget Contingency" } });
    expect(describeRecordError(e)).toMatchObject({ code: "invalid_custom_field", status: 400, field: "Budget Contingency", action: expect.any(String) });
    expect(describeRecordError("boom")).toEqual({ message: "boom" });
  });
  it("says which record credentials are missing, never echoing a value", () => {
    expect(recordCredentialsProblem({ token: "t", apiAuth: "a", apiSecret: "s" })).toBeNull();
    const msg = recordCredentialsProblem({ token: "secret-token-value" })!;
    expect(msg).toMatch(/api-auth and api-secret/);
    expect(msg).not.toContain("secret-token-value");
    expect(recordCredentialsProblem(null)).toMatch(/No connection/);
  });
  it("maps snapshot endpoints to record kinds", () => {
    expect([recordKindOfSnapshot("projects"), recordKindOfSnapshot("proposals"), recordKindOfSnapshot("projectScores")]).toEqual(["project", "proposal", null]);
  });
  it("reads custom fields from the client's manifest or a raw one, loosely", () => {
    expect(customFieldsFromManifest({ customFields: [{ name: "A", type: "numeric" }, { name: "B", type: "text" }, { name: "C" }, { nope: 1 }] })).toEqual([
      { name: "A", numeric: true },
      { name: "B", numeric: false },
      { name: "C", numeric: null },
    ]);
    expect(customFieldsFromManifest({ datasets: [{ published_schema: { custom_fields: [{ name: "A", type: "Edm.Decimal" }] } }, { published_schema: null }] })).toEqual([{ name: "A", numeric: true }]);
    expect(customFieldsFromManifest(null)).toEqual([]);
    expect(customFieldColumns([{ name: "C", type: "decimal" }, { name: "x", type: "text" }], [{ name: "C", numeric: null }])).toEqual([{ name: "C", numeric: true }]);
  });
});
