/**
 * Sources and an import call for the streamed-import tests (issue #38): `streamImport.test.ts` and
 * `streamReview.test.ts`.
 */
import { Workbook, createRequestContext } from "../../src/emulator";
import { importSource } from "../../src/workbook/importSource";
import { TableWriter } from "../../src/workbook/tableWriter";
import type { RefreshSource } from "../../src/refresh/source";
import type { Table } from "../../src/table/model";
import { fixedNow, TOKEN } from "./helpers";

export const CONNECTION = { id: "conn-1", baseUrl: "http://127.0.0.1:4100" };

export interface StreamingOptions {
  /** Rows per piece of the body (the sink's flush is awaited between pieces). */
  piece?: number;
  /** Throws the source's `error` before row `at`. */
  fail?: { at: number; error: unknown };
  /** Reports a field no column lists before row `at`. */
  extra?: { at: number; field: string };
  /** Runs after each piece's flush, with the rows sent so far (a user or a co-author acting meanwhile). */
  afterFlush?: (rowsSent: number) => Promise<void> | void;
}

/**
 * A source that streams `table` through the sink as the service client does: the columns, then the
 * rows in pieces. An import that is not streamed (into a chosen sheet, a manifest count that does not
 * fit, a snapshot) asks without a sink and gets the table whole. `held()`: the most rows the writer
 * held at once, -1 when no writer was ever the sink.
 */
export function streaming(table: Table, opts: StreamingOptions = {}): RefreshSource & { held: () => number } {
  let writer: TableWriter | null = null;
  return {
    held: () => writer?.maxHeld ?? -1,
    async fetch(_source, request) {
      const validators = { etag: table.meta.etag, generatedAt: table.meta.generatedAt };
      if (!request.sink) return { status: "updated", table, validators };
      const sink = request.sink;
      writer = sink instanceof TableWriter ? sink : null;
      sink.begin(table.columns);
      const piece = opts.piece ?? 97;
      for (let i = 0; i < table.rows.length; i++) {
        if (opts.fail && i === opts.fail.at) throw opts.fail.error;
        if (opts.extra && i === opts.extra.at) sink.extraField?.(opts.extra.field);
        sink.row(table.rows[i].slice());
        if (i % piece === piece - 1) {
          await sink.flush?.();
          await opts.afterFlush?.(i + 1);
        }
      }
      await sink.flush?.();
      const done = sink.end();
      return { status: "updated", table: { ...table, ...done }, validators };
    },
  };
}

/** `importSource` of the financials dataset (JSON) into `wb`, as the task pane calls it. */
export function streamed(wb: Workbook, from: RefreshSource, opts: Partial<Parameters<typeof importSource>[2]> = {}, context: Excel.RequestContext = createRequestContext(wb)) {
  return importSource(context, from, {
    source: { kind: "dataset", key: "financials", format: "json" },
    connection: CONNECTION,
    companyId: "acme",
    bindingId: "b1",
    secrets: [TOKEN],
    now: fixedNow,
    ...opts,
  });
}

/** An `afterFlush` that, once `rows` rows were sent, runs `act` on `wb` through its own request context (once). */
export function once(wb: Workbook, rows: number, act: (workbook: Excel.Workbook) => void): { afterFlush: (sent: number) => Promise<void>; done: () => boolean } {
  let done = false;
  return {
    done: () => done,
    afterFlush: async (sent) => {
      if (done || sent < rows) return;
      done = true;
      const ctx = createRequestContext(wb);
      act(ctx.workbook);
      await ctx.sync();
    },
  };
}
