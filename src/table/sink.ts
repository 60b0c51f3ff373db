/**
 * A consumer of rows as a source streams them in, so a caller can reduce a table (summarise,
 * filter) without the whole raw table ever being in memory. The service client feeds it when a
 * sink is given (`fetchDataset(key, { sink })`); the local query engine provides one
 * (`compileQuery(...).sink()`).
 */
import type { CellValue, Column } from "./model";

export interface TableSink {
  /**
   * The source's columns, once, before the first row. May throw to refuse them. `facts.converted`:
   * every row's cells are already the model's values for their column types (the service client's
   * readers convert each cell as it is read), so a sink need not check the types again.
   */
  begin(columns: readonly Column[], facts?: { converted?: boolean }): void;
  /** One source row: a fresh array (`columns.length` cells) the sink may keep. */
  row(cells: CellValue[]): void;
  /**
   * Called by a streaming source between pieces of the body, and awaited before the next piece is
   * read (backpressure): a sink that does slow work with the rows (the workbook writer sending them
   * to Excel in blocks, issue #38) does it here, so reading pauses while it works and the rows
   * waiting in memory stay one block. Optional; an error it throws ends the download.
   */
  flush?(): Promise<void> | void;
  /**
   * True for a sink that drops each row soon after it arrives (the workbook writer keeps one block):
   * the JSON reader may then read its rows straight from the body's text (`src/service/jsonFast.ts`),
   * whose text cells are copied out of it all the same (a date's text, which such a sink types as it
   * arrives, is not). A sink that keeps rows (a summary's group keys, a collected table) leaves it
   * unset and gets the batch reader.
   */
  readonly transient?: boolean;
  /**
   * Told of a field a row carries that no column describes (a JSON export's row with a field its
   * `columns` do not list). Without it such fields are dropped; a sink that cannot drop them (the
   * workbook writer, whose header is written before the last row arrives) throws, which ends the read.
   */
  extraField?(name: string): void;
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
