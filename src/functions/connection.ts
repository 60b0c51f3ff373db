/**
 * Which connection a worksheet function uses (issue #28; README "Worksheet functions"). Pure.
 *
 * 1. The `connection` argument, when given: this device's connection of that name (case-insensitive)
 *    or id.
 * 2. Otherwise the environment and company the workbook's tables come from (its bindings), resolved
 *    by the rule every refresh uses (`resolveConnectionId`): a workbook from a colleague works on any
 *    device that has a connection for the same environment and company.
 * 3. Otherwise (a workbook without tables) this device's only connection.
 *
 * Anything else is a clear `#N/A` naming what is missing; no token ever appears in it.
 */
import type { ConnectionSummary } from "../addin/connectionStore";
import { resolveConnectionId, type BindingOrigin } from "../addin/refreshSummary";
import { FunctionError } from "./logic";

const ADD_ONE = "Open the PPM pane's Connect tab and add one.";

export function pickConnection(connections: readonly ConnectionSummary[], arg: unknown, origins: readonly BindingOrigin[]): ConnectionSummary {
  const withToken = (c: ConnectionSummary): ConnectionSummary => {
    if (!c.hasToken) throw new FunctionError("#N/A", `The connection "${c.name}" has no token on this device. Open the PPM pane and use Update token.`);
    return c;
  };
  if (typeof arg === "string" && arg.trim() !== "") {
    const want = arg.trim().toLowerCase();
    const c = connections.find((x) => x.name.toLowerCase() === want) ?? connections.find((x) => x.id.toLowerCase() === want);
    if (!c) throw new FunctionError("#N/A", `No connection named "${arg.trim()}" on this device. ${ADD_ONE}`);
    return withToken(c);
  }
  if (arg !== undefined && arg !== null && arg !== "") throw new FunctionError("#VALUE!", "The connection must be the name of a connection, as the PPM pane lists it.");
  if (origins.length > 0) {
    for (const o of origins) {
      const id = resolveConnectionId(o, connections);
      const c = id ? connections.find((x) => x.id === id) : undefined;
      if (c) return withToken(c);
    }
    const o = origins[0];
    throw new FunctionError("#N/A", `This device has no connection for ${o.environment}${o.companyId ? ` (company ${o.companyId})` : ""}, where this workbook's tables come from. ${ADD_ONE}`);
  }
  if (connections.length === 0) throw new FunctionError("#N/A", `No PPM connection on this device. ${ADD_ONE}`);
  if (connections.length > 1) {
    throw new FunctionError("#N/A", `This device has ${connections.length} connections and the workbook names none: give the connection's name as the last argument, e.g. "${connections[0].name}".`);
  }
  return withToken(connections[0]);
}
