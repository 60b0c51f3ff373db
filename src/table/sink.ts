/**
 * A consumer of rows as a source streams them in, so a caller can reduce a table (summarise,
 * filter) without the whole raw table ever being in memory. The service client feeds it when a
 * sink is given (`fetchDataset(key, { sink })`); the local query engine provides one
 * (`compileQuery(...).sink()`).
 */
import type { CellValue, Column } from "./model";

export interface TableSink {
  /** The source's columns, once, before the first row. May throw to refuse them. */
  begin(columns: readonly Column[]): void;
  /** One source row: a fresh array (`columns.length` cells) the sink may keep. */
  row(cells: CellValue[]): void;
  /** After the last row: the resulting columns and rows. */
  end(): { columns: Column[]; rows: CellValue[][] };
}

/** The sink that keeps every row: what a fetch without a sink does. */
export function collectingSink(): TableSink {
  let cols: Column[] = [];
  const rows: CellValue[][] = [];
  return {
    begin(columns) {
      cols = columns.map((c) => ({ ...c }));
    },
    row(cells) {
      rows.push(cells);
    },
    end: () => ({ columns: cols, rows }),
  };
}
