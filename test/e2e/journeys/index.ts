/**
 * The journeys, in the order a user meets the add-in. They share one browser page and one
 * reference service, so each starts from the state the previous one left (as a user's session does).
 */
import type { Journey } from "../harness";
import { previewLoads } from "./preview";

export const JOURNEYS: Journey[] = [previewLoads];
