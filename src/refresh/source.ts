/**
 * The refresh engine's view of the service: one small interface, so the engine can be tested with
 * fakes, plus an adapter to the real service client.
 */
import type { Table } from "../table/model";
import type { TableSink } from "../table/sink";
import type { PpmClient, Validators } from "../service";
import type { BindingSource, BindingValidators } from "./binding";
import { chooseKey, type KeyChoice, type KeyMetadata } from "./delta";

export interface SourceRequest {
  /** Told the size of each piece of the response body as it arrives (the refresh log's bytes). */
  onBytes?: (bytes: number) => void;
  /** Validators of the data currently in the sheet; the source sends them as a conditional request. */
  validators: BindingValidators;
  signal?: AbortSignal;
  onProgress?: (received: { rows: number }) => void;
  /**
   * Rows go through this sink as they arrive and the result's table is what it returns (a local
   * query evaluated while streaming, see `createQuerySink`); sources that cannot stream pass their
   * complete table through it.
   */
  sink?: TableSink;
}

/** What a source answers: "unchanged" (e.g. HTTP 304) or a complete new table. */
export type SourceResult =
  | { status: "unchanged"; validators: BindingValidators }
  | { status: "updated"; table: Table; validators: BindingValidators; key?: KeyChoice | null };

/** Anything that can fetch a binding's source. Errors are thrown (with a `code` where known). */
export interface RefreshSource {
  fetch(source: BindingSource, request: SourceRequest): Promise<SourceResult>;
}

/** The slice of the service client (`src/service`) this adapter uses. */
export type PpmClientLike = Pick<PpmClient, "fetchDataset" | "fetchSnapshot"> & { metadata?: () => Promise<KeyMetadata> };

function defined(v: BindingValidators): Validators {
  const out: Validators = {};
  if (v.etag) out.etag = v.etag;
  if (v.lastModified) out.lastModified = v.lastModified;
  if (v.generatedAt) out.generatedAt = v.generatedAt;
  return out;
}

/**
 * Adapts the service client to {@link RefreshSource}. Datasets use a conditional request; snapshots
 * have no conditional form in the spec, so they are fetched whole and the engine compares the
 * content fingerprint the client puts in `table.meta.etag`.
 */
export function sourceFromClient(client: PpmClientLike): RefreshSource {
  return {
    async fetch(source, request) {
      if (source.kind === "dataset") {
        // `$metadata` (the row key) is needed only once rows arrive. It is requested at the first
        // progress report (the first 1,000 CSV rows, the first JSON batch), beside the rest of the
        // body instead of after it: one round trip fewer for an import or a changed refresh. Not
        // before the answer: a 304 needs none. Failing, it means no key, as it always did.
        let keyMetadata: Promise<KeyMetadata | null> | undefined;
        const metadataOnce = (): Promise<KeyMetadata | null> =>
          (keyMetadata ??= client.metadata ? Promise.resolve().then(() => client.metadata!()).catch(() => null) : Promise.resolve(null));
        const r = await client.fetchDataset(source.key, {
          format: source.format,
          conditional: true,
          validators: defined(request.validators),
          signal: request.signal,
          onProgress: (rows: number) => {
            if (rows > 0) void metadataOnce();
            request.onProgress?.({ rows });
          },
          sink: request.sink,
          onBody: request.onBytes ? (chunk: Uint8Array) => request.onBytes?.(chunk.byteLength) : undefined,
        });
        if (r.status === "unchanged") return { status: "unchanged", validators: { ...request.validators, ...r.validators } };
        // The row key for a delta write (issue #15): `$metadata`'s <Key>. Unavailable ⇒ rows match by position.
        const metadata = await metadataOnce();
        return { status: "updated", table: r.table, validators: { ...r.validators }, key: chooseKey(source, metadata) };
      }
      const whole = await client.fetchSnapshot(source.endpoint, { signal: request.signal });
      const table = request.sink ? throughSink(whole, request.sink) : whole;
      return { status: "updated", table, validators: { etag: table.meta.etag, lastModified: table.meta.lastModified, generatedAt: table.meta.generatedAt }, key: chooseKey(source, null) };
    },
  };
}

/** A complete table passed through a sink: the sink's result with the table's metadata. */
export function throughSink(table: Table, sink: TableSink): Table {
  sink.begin(table.columns);
  for (const row of table.rows) sink.row(row.slice());
  return { ...sink.end(), meta: { ...table.meta } };
}
