import { isDark } from "../../src/taskpane/theme";

describe("isDark", () => {
  it.each([
    ["#ffffff", false],
    ["#f3f3f3", false],
    ["#262626", true],
    ["#000000", true],
    ["292929", true],
    ["not a colour", false],
  ])("%s → %s", (hex, dark) => {
    expect(isDark(hex)).toBe(dark);
  });
});
