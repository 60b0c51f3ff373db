import { ConnectionInputError, ConnectionStore, STORAGE_KEYS, deviceStorage, addressOrigin, sameOrigin, type ConnectionField, type ConnectionInput, type StorageLike } from "../../src/addin/connectionStore";

class MemoryStorage implements StorageLike {
  readonly map = new Map<string, string>();
  getItem(k: string) {
    return this.map.has(k) ? this.map.get(k)! : null;
  }
  setItem(k: string, v: string) {
    this.map.set(k, String(v));
  }
  removeItem(k: string) {
    this.map.delete(k);
  }
}

function ids() {
  let n = 0;
  return () => `c${++n}`;
}

const TOKEN = "demo-acme-token";

describe("ConnectionStore", () => {
  it("adds a connection, normalises the address and keeps secrets out of the listing", () => {
    const storage = new MemoryStorage();
    const store = new ConnectionStore(storage, { newId: ids() });
    const c = store.save({ name: "  Acme  ", baseUrl: "HTTP://LOCALHOST:4100/", token: TOKEN, apiAuth: "demo-api-auth", apiSecret: "demo-api-secret" });
    expect(c).toEqual({ id: "c1", name: "Acme", baseUrl: "http://localhost:4100", companyId: null, hasToken: true, hasRecordCredentials: true });
    expect(JSON.stringify(store.list())).not.toContain(TOKEN);
    // The listing entry holds no secret; the secrets sit in their own entry.
    expect(storage.getItem(STORAGE_KEYS.connections)).not.toContain(TOKEN);
    expect(storage.getItem(STORAGE_KEYS.secretPrefix + "c1")).toContain(TOKEN);
    expect(store.connection("c1")).toEqual({
      id: "c1",
      name: "Acme",
      baseUrl: "http://localhost:4100",
      token: TOKEN,
      apiAuth: "demo-api-auth",
      apiSecret: "demo-api-secret",
    });
  });

  it("prefixes every key with the partition key when Office defines one", () => {
    const storage = new MemoryStorage();
    const store = new ConnectionStore(storage, { partitionKey: "part-42", newId: ids() });
    store.save({ name: "Acme", baseUrl: "https://eu.example.com", token: TOKEN });
    store.setActive("c1");
    expect([...storage.map.keys()].sort()).toEqual(
      ["part-42:" + STORAGE_KEYS.active, "part-42:" + STORAGE_KEYS.connections, "part-42:" + STORAGE_KEYS.secretPrefix + "c1"].sort(),
    );
    // Another partition sees nothing.
    expect(new ConnectionStore(storage, { partitionKey: "other" }).list()).toEqual([]);
  });

  it("keeps several companies and environments side by side", () => {
    const store = new ConnectionStore(new MemoryStorage(), { newId: ids() });
    store.save({ name: "Acme", baseUrl: "https://eu.example.com", token: "tok-acme" });
    store.save({ name: "Globex", baseUrl: "https://eu.example.com", token: "tok-globex" });
    store.save({ name: "Acme US", baseUrl: "https://us.example.com", token: "tok-acme-us" });
    expect(store.list().map((c) => c.name)).toEqual(["Acme", "Globex", "Acme US"]);
    expect(store.connection("c2")!.token).toBe("tok-globex");
    expect(store.connection("c3")!.baseUrl).toBe("https://us.example.com");
  });

  it("rejects bad input with the field to correct and stores nothing", () => {
    const storage = new MemoryStorage();
    const store = new ConnectionStore(storage, { newId: ids() });
    const fieldOf = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        expect(e).toBeInstanceOf(ConnectionInputError);
        return (e as ConnectionInputError).field;
      }
      throw new Error("expected a ConnectionInputError");
    };
    expect(fieldOf(() => store.save({ name: "", baseUrl: "https://a.example.com", token: "t" }))).toBe("name");
    expect(fieldOf(() => store.save({ name: "A", baseUrl: "http://a.example.com", token: "t" }))).toBe("baseUrl");
    expect(fieldOf(() => store.save({ name: "A", baseUrl: "https://a.example.com?company_api_token=x", token: "t" }))).toBe("baseUrl");
    expect(fieldOf(() => store.save({ name: "A", baseUrl: "not a url", token: "t" }))).toBe("baseUrl");
    expect(fieldOf(() => store.save({ name: "A", baseUrl: "https://a.example.com", token: "" }))).toBe("token");
    expect(fieldOf(() => store.save({ name: "A", baseUrl: "https://a.example.com", token: "two words" }))).toBe("token");
    expect(fieldOf(() => store.save({ name: "A", baseUrl: "https://a.example.com", token: "t", apiAuth: "x" }))).toBe("apiSecret");
    expect(fieldOf(() => store.save({ name: "my secret-token-1", baseUrl: "https://a.example.com", token: "secret-token-1" }))).toBe("name");
    expect(storage.map.size).toBe(0);
  });

  it("refuses plain http to an IPv6 address, which the pane's security policy cannot allow, and says what to write", () => {
    const storage = new MemoryStorage();
    const store = new ConnectionStore(storage, { newId: ids() });
    let message = "";
    try {
      store.save({ name: "A", baseUrl: "http://[::1]:4100", token: "t" });
    } catch (e) {
      expect(e).toBeInstanceOf(ConnectionInputError);
      expect((e as ConnectionInputError).field).toBe("baseUrl");
      message = (e as Error).message;
    }
    expect(message).toContain("http://localhost:4100");
    expect(storage.map.size).toBe(0);
    // https to an IPv6 address is covered by the policy's `https:` and stays allowed.
    expect(store.save({ name: "B", baseUrl: "https://[::1]:4100", token: "t" }).baseUrl).toBe("https://[::1]:4100");
  });

  it("never echoes a secret in a validation message", () => {
    const store = new ConnectionStore(new MemoryStorage(), { newId: ids() });
    // Each secret field refused for its content: the error names the field, never the value.
    const cases: Array<[ConnectionField, Partial<ConnectionInput>, string]> = [
      ["token", { token: "s3cr3t\ntoken" }, "s3cr3t"],
      ["token", { token: "s3cr3t-tökén" }, "s3cr3t"],
      ["apiAuth", { token: "tok-ok-1", apiAuth: "auth s3cr3t", apiSecret: "x-secret" }, "s3cr3t"],
      ["apiSecret", { token: "tok-ok-1", apiAuth: "auth-1", apiSecret: "sec\ts3cr3t" }, "s3cr3t"],
      ["token", { token: "s3cr3t".repeat(1000) }, "s3cr3t"],
    ];
    for (const [field, input, secret] of cases) {
      let caught: unknown = null;
      try {
        store.save({ name: "A", baseUrl: "https://a.example.com", ...input });
      } catch (e) {
        caught = e;
      }
      expect(caught).toBeInstanceOf(ConnectionInputError);
      expect((caught as ConnectionInputError).field).toBe(field);
      expect((caught as ConnectionInputError).message).not.toContain(secret);
    }
  });

  it("edits keep stored secrets when the secret fields are left empty", () => {
    const store = new ConnectionStore(new MemoryStorage(), { newId: ids() });
    store.save({ name: "Acme", baseUrl: "https://eu.example.com", token: TOKEN, apiAuth: "a", apiSecret: "b" });
    store.setCompanyId("c1", "acme");
    const edited = store.save({ id: "c1", name: "Acme EU", baseUrl: "https://eu.example.com/", token: "", apiAuth: "", apiSecret: "" });
    expect(edited).toMatchObject({ id: "c1", name: "Acme EU", companyId: "acme", hasToken: true, hasRecordCredentials: true });
    expect(store.connection("c1")!.token).toBe(TOKEN);
    // Changing the address drops the learnt company id: it may be another company now.
    expect(store.save({ id: "c1", name: "Acme EU", baseUrl: "https://eu.example.com/v2" }).companyId).toBeNull();
    expect(store.save({ id: "c1", name: "Acme EU", baseUrl: "https://us.example.com", token: "tok-us" }).companyId).toBeNull();
  });

  it("secrets stay with their host: another scheme, host or port drops them and asks for a token (#22 item 1)", () => {
    const storage = new MemoryStorage();
    const store = new ConnectionStore(storage, { newId: ids() });
    store.save({ name: "Acme", baseUrl: "https://eu.example.com/ppm", token: TOKEN, apiAuth: "auth-1", apiSecret: "secret-1" });
    const before = new Map(storage.map);
    for (const baseUrl of ["https://evil.example.net/ppm", "https://eu.example.com:8443/ppm", "http://localhost/ppm", "https://eu.example.com.evil.net/ppm"]) {
      let caught: unknown = null;
      try {
        store.save({ id: "c1", name: "Acme", baseUrl, token: "", apiAuth: "", apiSecret: "" });
      } catch (e) {
        caught = e;
      }
      expect(caught).toBeInstanceOf(ConnectionInputError);
      expect((caught as ConnectionInputError).field).toBe("token");
      expect((caught as ConnectionInputError).message).toContain(new URL(baseUrl).origin);
      expect((caught as ConnectionInputError).message).not.toContain(TOKEN);
      // Nothing was stored: the connection still points where it did, with its secrets.
      expect(storage.map).toEqual(before);
    }
    // With a token for the new host: saved, and nothing of the old host's secrets comes along.
    const moved = store.save({ id: "c1", name: "Acme", baseUrl: "https://other.example.net", token: "tok-for-other" });
    expect(moved).toMatchObject({ hasToken: true, hasRecordCredentials: false, companyId: null });
    const conn = store.connection("c1")!;
    expect(conn).toMatchObject({ baseUrl: "https://other.example.net", token: "tok-for-other" });
    expect(conn.apiAuth).toBeUndefined();
    expect(conn.apiSecret).toBeUndefined();
    expect(JSON.stringify([...storage.map.values()])).not.toMatch(/secret-1|auth-1|demo-acme-token/);
    expect(store.allSecrets()).toEqual(["tok-for-other"]);
  });

  it("the same origin keeps the stored secrets: another path, host case, the default port written out", () => {
    const store = new ConnectionStore(new MemoryStorage(), { newId: ids() });
    store.save({ name: "Acme", baseUrl: "https://eu.example.com/ppm", token: TOKEN, apiAuth: "auth-1", apiSecret: "secret-1" });
    for (const baseUrl of ["https://eu.example.com/other", "https://EU.example.com/ppm", "https://eu.example.com:443/ppm"]) {
      expect(store.save({ id: "c1", name: "Acme", baseUrl })).toMatchObject({ hasToken: true, hasRecordCredentials: true });
      expect(store.connection("c1")).toMatchObject({ token: TOKEN, apiAuth: "auth-1", apiSecret: "secret-1" });
    }
    expect(sameOrigin("https://a.example.com", "https://a.example.com:443/x")).toBe(true);
    expect(sameOrigin("https://a.example.com", "http://a.example.com")).toBe(false);
    expect(sameOrigin("https://a.example.com", "not a url")).toBe(false);
    expect(addressOrigin("https://A.example.com:8443/p")).toBe("https://a.example.com:8443");
  });

  it("editing a removed connection fails instead of re-creating it", () => {
    const store = new ConnectionStore(new MemoryStorage(), { newId: ids() });
    expect(() => store.save({ id: "gone", name: "A", baseUrl: "https://a.example.com", token: "t" })).toThrow(/no longer exists/);
  });

  it("update token / forget token act on exactly one connection", () => {
    const store = new ConnectionStore(new MemoryStorage(), { newId: ids() });
    store.save({ name: "Acme", baseUrl: "https://eu.example.com", token: "old-acme", apiAuth: "a", apiSecret: "b" });
    store.save({ name: "Globex", baseUrl: "https://eu.example.com", token: "tok-globex" });
    store.forgetToken("c1");
    expect(store.get("c1")).toMatchObject({ hasToken: false, hasRecordCredentials: true });
    expect(store.connection("c1")!.token).toBe("");
    expect(store.connection("c2")!.token).toBe("tok-globex");
    store.setToken("c1", " new-acme ");
    expect(store.connection("c1")!.token).toBe("new-acme");
    expect(store.connection("c1")!.apiSecret).toBe("b");
    expect(() => store.setToken("c1", "")).toThrow(ConnectionInputError);
    expect(() => store.setToken("nope", "x")).toThrow(/no longer exists/);
  });

  it("remove deletes the secrets and moves the active choice", () => {
    const storage = new MemoryStorage();
    const store = new ConnectionStore(storage, { newId: ids() });
    store.save({ name: "A", baseUrl: "https://a.example.com", token: "tok-a" });
    store.save({ name: "B", baseUrl: "https://b.example.com", token: "tok-b" });
    store.setActive("c2");
    expect(store.activeId()).toBe("c2");
    expect(store.remove("c2")).toBe(true);
    expect(store.remove("c2")).toBe(false);
    expect(store.activeId()).toBe("c1");
    expect([...storage.map.values()].join("|")).not.toContain("tok-b");
    expect(() => store.setActive("c2")).toThrow(ConnectionInputError);
  });

  it("unreadable stored data is reported and backed up, not lost", () => {
    const storage = new MemoryStorage();
    storage.setItem(STORAGE_KEYS.connections, "{not json");
    const store = new ConnectionStore(storage, { newId: ids() });
    expect(store.list()).toEqual([]);
    expect(store.problem).toMatch(/could not be read/);
    store.save({ name: "A", baseUrl: "https://a.example.com", token: "tok-a" });
    expect(storage.getItem(STORAGE_KEYS.connections + ".unreadable")).toBe("{not json");
    expect(store.list().map((c) => c.name)).toEqual(["A"]);
  });

  it("allSecrets lists every stored credential for redaction", () => {
    const store = new ConnectionStore(new MemoryStorage(), { newId: ids() });
    store.save({ name: "A", baseUrl: "https://a.example.com", token: "tok-a", apiAuth: "auth-a", apiSecret: "sec-a" });
    expect(store.allSecrets().sort()).toEqual(["auth-a", "sec-a", "tok-a"]);
  });
});

describe("deviceStorage", () => {
  it("uses the given storage when it works", () => {
    const s = new MemoryStorage();
    const r = deviceStorage(() => s);
    expect(r.persistent).toBe(true);
    expect(r.storage).toBe(s);
    expect(s.map.size).toBe(0); // the probe key is removed again
  });
  it("falls back to memory when storage is blocked or missing", () => {
    const blocked = deviceStorage(() => {
      throw new Error("SecurityError");
    });
    expect(blocked.persistent).toBe(false);
    blocked.storage.setItem("k", "v");
    expect(blocked.storage.getItem("k")).toBe("v");
    expect(deviceStorage(() => undefined).persistent).toBe(false);
  });
});
