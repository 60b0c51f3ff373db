/**
 * Jest set-up for every suite: the table lock's wait between writing and reading back (issue #21,
 * `src/workbook/lock.ts`) defaults to at least 250 ms, there to let a late write from another
 * runtime land. Tests that do not race two runtimes set its floor to 0 (the wait is then 3 round
 * trips of the emulator, i.e. nothing); the lock's own race tests set it back.
 */
import * as lock from "../../src/workbook/lock";

if (lock.lockTiming) lock.lockTiming.minSettleMs = 0;
