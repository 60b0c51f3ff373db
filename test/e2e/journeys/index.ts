/**
 * The journeys, in the order a user meets the add-in. They share one browser page and one
 * reference service, so each starts from the state the previous one left (as a user's session does).
 */
import type { Journey } from "../harness";
import { cancelImport, cancelWhileStreaming } from "./cancel";
import { addConnection } from "./connections";
import { importFinancials, listDatasets } from "./datasets";
import { accessibility } from "./a11y";
import { recordsAbsent, secondEnvironment } from "./environments";
import { importFormats } from "./formats";
import { darkTheme } from "./theme";
import { importAtSelection } from "./destination";
import { notGeneratedAndBroken, reportingDisabled, staleTokenOnRefresh, wrongToken } from "./errors";
import { previewGrid, previewTaskPane } from "./preview";
import { importWithPastedQuery } from "./query";
import { importSummary, largerThanSheet } from "./summarize";
import { recordsWriteBack, recordsWriteBackAfterStart } from "./records";
import { refreshUnchanged, refreshUpdated } from "./refresh";
import { ribbonRefreshAll, ribbonSeparateRuntimes, ribbonSharedRuntime } from "./ribbon";
import { reopenRefreshesFlaggedTables, reopenWithoutConnection } from "./openRefresh";
import { deltaRefresh, refreshLog, staleMark } from "./delta";
import { importSnapshots } from "./snapshots";
import { narrowPane } from "./narrow";
import { keyboardImport } from "./keyboard";
import { beforeFluent } from "./fluentLate";
import { changeCounts, previewControls, serviceDown } from "./truth";
import { formulaErrors, formulaOneRequest, formulaRegeneration, formulaValues, savedView } from "./formulas";
import { editAddressKeepsSecrets, reopenAsksFirst, summaryPageOutsideDialog } from "./secrets";
import { terminal } from "./terminal";
import { foreignPageCannotDriveService, hostFilesUnderPolicy } from "./security";

export const JOURNEYS: Journey[] = [
  previewGrid,
  previewTaskPane,
  addConnection,
  listDatasets,
  importFinancials,
  refreshUnchanged,
  refreshUpdated,
  deltaRefresh,
  staleMark,
  refreshLog,
  formulaValues,
  formulaErrors,
  formulaOneRequest,
  formulaRegeneration,
  savedView,
  importWithPastedQuery,
  importSummary,
  importAtSelection,
  wrongToken,
  staleTokenOnRefresh,
  reportingDisabled,
  notGeneratedAndBroken,
  importSnapshots,
  cancelImport,
  ribbonRefreshAll,
  ribbonSharedRuntime,
  ribbonSeparateRuntimes,
  summaryPageOutsideDialog,
  importFormats,
  recordsWriteBack,
  recordsWriteBackAfterStart,
  secondEnvironment,
  recordsAbsent,
  cancelWhileStreaming,
  keyboardImport,
  narrowPane,
  accessibility,
  darkTheme,
  beforeFluent,
  reopenRefreshesFlaggedTables,
  reopenWithoutConnection,
  reopenAsksFirst,
  editAddressKeepsSecrets,
  previewControls,
  serviceDown,
  changeCounts,
  terminal,
  // Issue #36, each in a browser context of its own.
  foreignPageCannotDriveService,
  hostFilesUnderPolicy,
  // Last: its table is bound to a service of its own, whose connection it removes again, so the
  // refresh journeys above never meet a table without a connection.
  largerThanSheet,
];
