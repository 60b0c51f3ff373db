/**
 * The request header the reference service's control hooks require (issue #36,
 * src/reference/control.ts): every `/__control/...` call of a test carries it, as curl would.
 */
import { CONTROL_HEADER, CONTROL_HEADER_VALUE } from "../../src/reference/controlHeader";

export const CONTROL: Readonly<Record<string, string>> = { [CONTROL_HEADER]: CONTROL_HEADER_VALUE };
