// jest's own typings: its asymmetric matchers (expect.stringMatching, …) are typed, not `any`.
import { expect } from "@jest/globals";
import type { Change } from "../../src/records/diff";
import { planUpdates, sendWriteback, summarize } from "../../src/records/send";
import type { RecordsClient, RecordBody } from "../../src/records/client";
import type { RecordKind } from "../../src/contract/contract";

function change(projectToken: string, field: string, value: string, status: "valid" | "invalid" | "conflict" = "valid"): Change {
  const validation = status === "valid" ? { status } : { status, message: `${status} reason` };
  return { row: 1, projectToken, field, old: "o", new: value, validation };
}

/** A fake client that fails some tokens the way the service client does (an Error with code/status/details). */
function fakeClient(failing: Record<string, { message: string; field?: string }> = {}) {
  const calls: { kind: RecordKind; token: string; body: RecordBody }[] = [];
  const client: RecordsClient = {
    async getRecord() {
      throw new Error("not used");
    },
    async createRecord() {
      throw new Error("not used");
    },
    async updateRecord(kind, token, body) {
      calls.push({ kind, token, body });
      const f = failing[token];
      if (f) throw Object.assign(new Error(f.message), { code: "invalid_request", status: 400, details: { body: { field: f.field } } });
      const out: Record<string, unknown> = { project_token: token };
      for (const [k, v] of Object.entries(body.custom_fields ?? {})) out[k] = v.replace(",", ".");
      return out;
    },
  };
  return { client, calls };
}

describe("planUpdates", () => {
  it("groups valid changes into one update per record, all fields together", () => {
    const plan = planUpdates("project", [change("a", "X", "1"), change("b", "X", "2"), change("a", "Y", "3"), change("c", "X", "bad", "invalid")]);
    expect(plan.map((u) => [u.projectToken, u.customFields])).toEqual([
      ["a", { X: "1", Y: "3" }],
      ["b", { X: "2" }],
    ]);
  });
});

describe("sendWriteback", () => {
  it("sends one PUT per record and reports each change, in input order", async () => {
    const { client, calls } = fakeClient();
    const changes = [change("a", "Budget", "12,5"), change("a", "Sponsor", "S"), change("b", "Budget", "1,234.5", "invalid"), change("c", "Budget", "3")];
    const out = await sendWriteback(client, "project", changes);
    expect(calls).toEqual([
      { kind: "project", token: "a", body: { custom_fields: { Budget: "12,5", Sponsor: "S" } } },
      { kind: "project", token: "c", body: { custom_fields: { Budget: "3" } } },
    ]);
    expect(out.map((o) => o.result)).toEqual([
      { status: "saved", stored: "12.5" },
      { status: "saved", stored: "S" },
      { status: "not-sent", message: "Not sent: invalid reason" },
      { status: "saved", stored: "3" },
    ]);
    expect(summarize(out)).toEqual({ saved: 3, rejected: 0, notSent: 1, records: 2 });
  });

  it("a record the service rejects does not stop the others; the blamed field gets the reason", async () => {
    const { client, calls } = fakeClient({ b: { message: "Custom field 'Budget' takes a decimal number", field: "Budget" } });
    const out = await sendWriteback(client, "proposal", [change("a", "Budget", "1"), change("b", "Budget", "2"), change("b", "Sponsor", "S"), change("c", "Budget", "3")]);
    expect(calls.map((c) => c.token)).toEqual(["a", "b", "c"]);
    expect(out.map((o) => o.result.status)).toEqual(["saved", "rejected", "rejected", "saved"]);
    expect(out[1].result).toMatchObject({ message: "Custom field 'Budget' takes a decimal number", code: "invalid_request" });
    expect(out[2].result).toMatchObject({ message: expect.stringMatching(/because of "Budget"/) });
  });

  it("stops before the next record when cancelled, marking the rest not sent", async () => {
    const { client, calls } = fakeClient();
    const ac = new AbortController();
    const out = await sendWriteback(client, "project", [change("a", "X", "1"), change("b", "X", "2")], { signal: ac.signal, onRecord: () => ac.abort() });
    expect(calls).toHaveLength(1);
    expect(out[1].result).toEqual({ status: "not-sent", message: "Not sent: cancelled." });
  });
});
