import { alignByFingerprint } from "../../src/refresh/align";

const h = (s: string) => s.split("");

test("rows in order with some changed, inserted and removed are aligned; changed rows are not", () => {
  // old: a b c d e f ; new: a X c d Y e f (b changed to X, Y inserted)
  expect([...alignByFingerprint(h("abcdef"), h("aXcdYef"))]).toEqual([0, -1, 2, 3, 5, 6]);
  // removed rows
  expect([...alignByFingerprint(h("abcdef"), h("abdf"))]).toEqual([0, 1, -1, 2, -1, 3]);
});

test("a row far away is trusted only as the start of a run at one offset", () => {
  const old = h("abcdefgh");
  const far = [...Array.from({ length: 50 }, (_, i) => `n${i}`), ...old];
  expect([...alignByFingerprint(old, far, 10)]).toEqual([50, 51, 52, 53, 54, 55, 56, 57]);
  // A lone far match (no run behind it) is not trusted.
  const lone = [...Array.from({ length: 50 }, (_, i) => `n${i}`), "a", "x", "y", "z"];
  expect([...alignByFingerprint(h("abcd"), lone, 10)]).toEqual([-1, -1, -1, -1]);
});

test("duplicates are matched in order, each new row once", () => {
  expect([...alignByFingerprint(h("aab"), h("aaab"))]).toEqual([0, 1, 3]);
  expect([...alignByFingerprint(h("aaa"), h("a"))]).toEqual([0, -1, -1]);
});
