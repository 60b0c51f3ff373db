import { parseBinding, serializeBinding, redact, draftBinding, BindingError } from "../../src/refresh/binding";
import { makeBinding, COLUMNS } from "./fixtures";

describe("binding storage format", () => {
  it("round-trips through its JSON form", () => {
    const b = makeBinding({ query: { filter: "amount gt 3", top: 10 } });
    expect(parseBinding(serializeBinding(b))).toEqual(b);
  });

  it("rejects untrusted input with a clear, non-echoing message", () => {
    expect(() => parseBinding("{not json")).toThrow(/not valid JSON/);
    expect(() => parseBinding(JSON.stringify({ ...makeBinding(), v: 99 }))).toThrow(/version 99.*Re-import/);
    const bad = { ...makeBinding(), rowCount: -1 };
    expect(() => parseBinding(JSON.stringify(bad))).toThrow(/rowCount/);
    // Unknown fields are refused: nothing unexpected (like a token field) is carried along.
    expect(() => parseBinding(JSON.stringify({ ...makeBinding(), token: "x" }))).toThrow(BindingError);
    expect(() => parseBinding(JSON.stringify({ ...makeBinding(), environment: "https://h/?company_api_token=abc" }))).toThrow(/environment/);
    expect(() => parseBinding(JSON.stringify({ ...makeBinding(), environment: "https://user:pw@h/" }))).toThrow(/environment/);
  });

  it("refuses to store a secret anywhere in the binding", () => {
    const token = "demo-acme-token";
    const b = makeBinding({ lastFailure: { at: "2026-01-01T00:00:00Z", code: "unauthorized", message: `bad token ${token}` } });
    expect(() => serializeBinding(b, [token])).toThrow(/credential/);
    try {
      serializeBinding(b, [token]);
    } catch (e) {
      expect(String((e as Error).message)).not.toContain(token);
    }
    expect(redact(`x ${token} y ${token}`, [token])).toBe("x [redacted] y [redacted]");
  });

  it("drafts bindings with the environment reduced to origin and path", () => {
    const d = draftBinding({
      id: "x1", connectionId: "c", environment: "https://h.example/tenant/?a=1#f", companyId: 7,
      source: { kind: "snapshot", endpoint: "projectResources" }, columns: COLUMNS, schemaVersion: null, validators: {},
    });
    expect(d.environment).toBe("https://h.example/tenant");
    expect(d.companyId).toBe("7");
    expect(d.query).toBeNull();
    expect(d.columns).toEqual(COLUMNS.map((c) => ({ name: c.name, type: c.type })));
  });
});
