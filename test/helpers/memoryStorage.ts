/** Shared test double for the task pane's device storage. */
import type { StorageLike } from "../../src/addin/connectionStore";

/** An in-memory `StorageLike` (what `localStorage` is to the connection store); `map` is open to assertions. */
export class MemoryStorage implements StorageLike {
  readonly map = new Map<string, string>();
  getItem(k: string) {
    return this.map.get(k) ?? null;
  }
  setItem(k: string, v: string) {
    this.map.set(k, v);
  }
  removeItem(k: string) {
    this.map.delete(k);
  }
}
