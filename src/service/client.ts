/**
 * The service client: typed, strict access to every reporting, snapshot and record endpoint.
 * No Office and no DOM: it runs in the task pane, in the ribbon-command runtime and in Node, on
 * `fetch` and web streams.
 */
import { HEADERS, PATHS, type RecordKind, type SnapshotEndpoint } from "../contract/contract";
import type { Column, Table } from "../table/model";
import type { TableSink } from "../table/sink";
import { type Connection, connectionScope, normalizeBaseUrl } from "./connection";
import { CsdlError, parseCsdl, type ServiceMetadata } from "./csdl";
import { clip, contentKind, isWrongKind, jsonErrorCode, peekStream, sniffKind, wrongKindAction, wrongKindMessage } from "./bodyCheck";
import { CsvSyntaxError, parseCsvStream } from "./csv";
import { normalizeCustomFieldForDisplay, validateNumericCustomField } from "./customFields";
import { passThrough, tableFromJsonStream } from "./jsonRows";
import { BodyShapeError, CsvTableBuilder, parseJsonLossless, readBodyText, tableFromJsonExport, tableFromOData, type MetaInput } from "./dataset";
import { PpmError, isPpmError, utcMinutes } from "./errors";
import { exportGeneration, type ManifestDatasetInfo, type ManifestInfo, readManifest } from "./manifest";
import { type RequestSpec, type SentRequest, Transport, type TransportOptions } from "./request";
import { combineResources } from "./resources";
import { type SnapshotSource, snapshotTable, validateSnapshotRows } from "./snapshot";
import { type ValidatorStore, type Validators, MemoryValidatorStore, validatorKey } from "./validators";

/** Options of {@link PpmClient}. */
export interface PpmClientOptions extends TransportOptions {
  /** Where dataset validators are kept between calls. Default: a {@link MemoryValidatorStore}. */
  validators?: ValidatorStore;
}

/** Options every call accepts. */
export interface CallOptions {
  signal?: AbortSignal;
}

/** The three forms a dataset can be fetched in. */
export type DatasetFormat = "json" | "csv" | "odata";

/** Options of {@link PpmClient.fetchDataset}. */
export interface FetchDatasetOptions extends CallOptions {
  format: DatasetFormat;
  /** Send stored validators and accept "unchanged" (default true). */
  conditional?: boolean;
  /** Validators to use instead of the store's (they are still written back to the store). */
  validators?: Validators;
  /** Called as rows are parsed (CSV: every 1000 rows and at the end; JSON/OData: at the end). */
  onProgress?: (rowsParsed: number) => void;
  /**
   * Receives the body's raw bytes, chunk by chunk, as they are read, before they are parsed (the
   * CLI writes a CSV export byte for byte from them). Only a result of `updated` vouches for them:
   * on any failure they are not the complete, valid body.
   */
  onBody?: (chunk: Uint8Array) => void;
  /**
   * Rows go to this sink as they are parsed instead of into the table, and the table holds what
   * `sink.end()` returns (e.g. a summary: `createQuerySink` in `src/query`), so a dataset larger
   * than a worksheet, or than memory, is reduced while it streams. Fields that no column declares
   * are not passed on. An error the sink throws ends the download and is thrown as it is.
   */
  sink?: TableSink;
}

/** Result of {@link PpmClient.fetchDataset}. */
export type DatasetResult = { status: "unchanged"; validators: Validators } | { status: "updated"; table: Table; validators: Validators };

/**
 * What OData JSON requests ask for (OData JSON Format 4.0 §3.1–3.2): minimal metadata, and Int64 and
 * Decimal values as strings (`IEEE754Compatible=true`), so every digit of an Int64 beyond 2^53 and
 * of a Decimal arrives as text that no JSON parser on the way can round. The reader accepts the
 * number form as well (a service may ignore the parameter): integers beyond 2^53 are then kept from
 * the number's text (`parseJsonLossless`, `JsonRowsScanner`). `;` and `=` keep Accept a
 * CORS-safelisted header, so no preflight is added.
 */
export const ODATA_JSON_ACCEPT = "application/json;odata.metadata=minimal;IEEE754Compatible=true";

/** An entry of the OData service root. */
export interface ServiceRootEntry {
  name: string;
  url: string;
  kind?: string;
}

/** Reachability of one endpoint group, as {@link PpmClient.probe} found it. */
export interface GroupProbe {
  state: "available" | "absent" | "unauthorized" | "disabled" | "no_credentials" | "error";
  error?: Record<string, unknown>;
}

/** Which endpoint groups this environment offers to this connection. */
export interface ProbeResult {
  /** Reporting endpoints answer for this company (false also when reporting is disabled). */
  reporting: boolean;
  snapshot: boolean;
  /** Record endpoints: `"unknown"` when the route exists but credentials are missing or refused. */
  record: boolean | "unknown";
  /**
   * Whether the validator headers (ETag, X-Service-Generated-At) were readable on the last dataset
   * response this client saw; undefined when it has not fetched a dataset yet.
   */
  corsExposesHeaders?: boolean;
  details: { reporting: GroupProbe; snapshot: GroupProbe; record: GroupProbe };
}

/** A project or proposal as read, plus its custom fields normalised for display. */
export interface RecordResult {
  /** The record exactly as the service sent it (fields beyond custom fields are not documented). */
  record: Record<string, unknown>;
  /** Custom-field values by display name: decimal strings with a dot, `""` and `null` kept distinct. */
  customFields: Record<string, string | null>;
}

/** Body of a record create/update: `custom_fields` (display name → string) plus other fields passed through. */
export interface RecordInput {
  custom_fields?: Record<string, string>;
  [field: string]: unknown;
}

/** Options of record writes. */
export interface RecordWriteOptions extends CallOptions {
  /**
   * Display names of numeric custom fields (checked against the spec's rule before sending).
   * Default: the manifest's custom fields typed `numeric`, when the manifest can be read.
   */
  numericFields?: readonly string[];
}

/** Options of record reads. */
export interface RecordReadOptions extends CallOptions {
  /** Display names of custom fields to pick out of the record. Default: from the manifest, when readable. */
  customFieldNames?: readonly string[];
}

/** Result of {@link PpmClient.checkCors}. */
export interface CorsReport {
  origin: string;
  preflightOk: boolean;
  allowOrigin: string | null;
  allowHeaders: string[];
  missingRequestHeaders: string[];
  exposedHeaders: string[];
  missingExposedHeaders: string[];
  /** The dataset whose response was inspected for exposed headers (null when none was usable). */
  checkedDataset: string | null;
  /**
   * Whether reporting works from `origin`: the reporting preflight passed and, when a dataset could
   * be fetched, its validator headers are readable. The record preflight does not affect it.
   */
  ok: boolean;
  /**
   * Whether a record write (`PUT /api/v1/project` with the record headers) would pass the preflight.
   * Only set when the connection has record credentials (`apiAuth` and `apiSecret`).
   */
  recordPreflightOk?: boolean;
  /** Record request headers the record preflight did not allow (set with {@link recordPreflightOk}). */
  recordMissingRequestHeaders?: string[];
  /** Record write methods (PUT) the record preflight did not allow (set with {@link recordPreflightOk}). */
  recordMissingMethods?: string[];
}

const FORMAT_LABEL: Record<DatasetFormat, string> = { csv: "CSV", json: "JSON", odata: "OData" };

/** Request headers the add-in sends from the task pane (what a preflight must allow). */
const NEEDED_REQUEST_HEADERS = [HEADERS.companyToken, "If-None-Match", "If-Modified-Since"];
/** Request headers of record calls (GET with record-token; POST/PUT with a JSON body). */
const NEEDED_RECORD_REQUEST_HEADERS = [HEADERS.apiAuth, HEADERS.apiToken, HEADERS.apiSecret, HEADERS.recordToken, "Content-Type"];
/** Record methods a preflight must allow explicitly (GET and POST are CORS-safelisted methods). */
const NEEDED_RECORD_METHODS = ["PUT"];
/** Response headers the add-in reads (Last-Modified is CORS-safelisted and always readable). */
const NEEDED_EXPOSED_HEADERS = ["ETag", HEADERS.generatedAt, HEADERS.schemaVersion];

/** The same stream, with each chunk shown to `onChunk` as it is read. */
function tapped(stream: ReadableStream<Uint8Array>, onChunk: (chunk: Uint8Array) => void): ReadableStream<Uint8Array> {
  const reader = stream.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await reader.read();
      if (done) return controller.close();
      onChunk(value);
      controller.enqueue(value);
    },
    cancel: (reason) => reader.cancel(reason),
  });
}

/** Busy time after which a streaming body hands control back to the page (see {@link yielding}). */
export const YIELD_AFTER_MS = 40;

/**
 * The same bytes, but after every {@link YIELD_AFTER_MS} of work the next chunk is read from a new
 * task. A fast body (a local service, a cached response) resolves every `read()` as a microtask, so
 * reading and parsing it would otherwise never let the page handle a click, Esc or a progress paint
 * until the whole export is in (a 1,000,000-row import held the pane for seconds). Costs one timer
 * per slice (≈ 1–4 ms per 40 ms of parsing).
 */
export function yielding(stream: ReadableStream<Uint8Array>, sliceMs = YIELD_AFTER_MS): ReadableStream<Uint8Array> {
  const reader = stream.getReader();
  let since = Date.now();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (Date.now() - since >= sliceMs) {
        await new Promise<void>((resolve) => setTimeout(resolve, 0));
        since = Date.now();
      }
      const { done, value } = await reader.read();
      if (done) return controller.close();
      controller.enqueue(value);
    },
    cancel: (reason) => reader.cancel(reason),
  });
}

function bytesStream(bytes: Uint8Array): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(bytes);
      controller.close();
    },
  });
}

function isObject(v: unknown): v is Record<string, unknown> {
  return !!v && typeof v === "object" && !Array.isArray(v);
}

/**
 * Client for one {@link Connection}. Every method takes an optional `AbortSignal`, is bounded by the
 * client's timeout and throws only {@link PpmError}.
 *
 * @example
 * ```ts
 * const client = new PpmClient({ id: "1", name: "Acme", baseUrl: "https://eu.example.com", token });
 * const r = await client.fetchDataset("financials", { format: "csv" });
 * if (r.status === "updated") write(r.table);
 * ```
 */
export class PpmClient {
  /** The connection, with its base URL normalised. */
  readonly connection: Connection;
  private readonly transport: Transport;
  private readonly store: ValidatorStore;
  private readonly now: () => Date;
  private manifestCache?: ManifestInfo;
  private metadataCache?: ServiceMetadata;
  private headersReadable?: boolean;
  private manifestUnavailable = false;

  constructor(connection: Connection, options: PpmClientOptions = {}) {
    this.connection = { ...connection, baseUrl: normalizeBaseUrl(connection.baseUrl) };
    this.transport = new Transport(this.connection, options);
    this.store = options.validators ?? new MemoryValidatorStore();
    this.now = options.now ?? (() => new Date());
  }

  /** Non-secret cache scope: environment + company (token fingerprint until the company id is known). */
  get scope(): string {
    return connectionScope(this.connection, this.manifestCache?.companyId);
  }

  /** The manifest read last by this client, if any (no request). */
  get cachedManifest(): ManifestInfo | undefined {
    return this.manifestCache;
  }

  // ---------------------------------------------------------------- reporting

  /** The OData service root: the dataset keys it lists. */
  async serviceRoot(opts: CallOptions = {}): Promise<ServiceRootEntry[]> {
    const body = await this.getJson({ method: "GET", group: "reporting", path: PATHS.odataRoot, accept: ODATA_JSON_ACCEPT, signal: opts.signal });
    if (!isObject(body) || !Array.isArray(body.value)) throw this.shape("the OData service root has no `value` list", "value", "schema_mismatch");
    return body.value.map((e, i) => {
      if (!isObject(e) || typeof e.name !== "string") throw this.shape(`service root entry ${i} has no name`, `value[${i}].name`, "schema_mismatch");
      return { ...e, name: e.name, url: typeof e.url === "string" ? e.url : e.name, ...(typeof e.kind === "string" ? { kind: e.kind } : {}) };
    });
  }

  /** `$metadata`, parsed into typed column lists per entity set. Cached for the client's life unless `refresh`. */
  async metadata(opts: CallOptions & { refresh?: boolean } = {}): Promise<ServiceMetadata> {
    if (this.metadataCache && !opts.refresh) return this.metadataCache;
    const xml = await this.transport.send({ method: "GET", group: "reporting", path: PATHS.odataMetadata, accept: "application/xml", signal: opts.signal }, ({ response }) => response.text());
    try {
      this.metadataCache = parseCsdl(xml);
    } catch (e) {
      if (e instanceof CsdlError) throw this.transport.error("malformed_body", `The service's $metadata could not be read: ${e.message}.`, { path: e.where });
      throw e;
    }
    return this.metadataCache;
  }

  /**
   * The manifest: datasets with their export status (`ready`, `empty`, or `no_export` for datasets
   * listed but never generated - not an error), columns, and custom-field metadata. Always fetched
   * fresh; the result is kept as {@link cachedManifest}.
   */
  async manifest(opts: CallOptions = {}): Promise<ManifestInfo> {
    const body = await this.getJson({ method: "GET", group: "reporting", path: PATHS.manifest, signal: opts.signal });
    const r = readManifest(body);
    if (!r.ok) throw this.transport.error("schema_mismatch", `The manifest does not have the documented shape (${r.message} at ${r.path}).`, { path: r.path });
    this.manifestCache = r.manifest;
    return r.manifest;
  }

  /** The cached manifest, or a fresh one; `undefined` when it cannot be read (cancellation still throws). */
  private async manifestIfAvailable(signal?: AbortSignal): Promise<ManifestInfo | undefined> {
    if (this.manifestCache) return this.manifestCache;
    // Reporting off or absent is not going to change within a session: ask once, not per snapshot.
    if (this.manifestUnavailable) return undefined;
    try {
      return await this.manifest({ signal });
    } catch (e) {
      if (isPpmError(e, "cancelled")) throw e;
      if (isPpmError(e, "bi_reporting_disabled", "route_absent")) this.manifestUnavailable = true;
      return undefined;
    }
  }

  /**
   * Fetches a complete dataset in one of its three forms, into the tabular model.
   *
   * With `conditional` (the default), the validators stored for this environment + company +
   * dataset + format are sent (`If-None-Match`, `If-Modified-Since`) and a 304 comes back as
   * `{ status: "unchanged" }` without a body being read. When a deployment hides those headers
   * (CORS), the manifest's generation time is compared instead. New validators are stored on
   * every success.
   *
   * @throws PpmError e.g. `unknown_dataset`, `not_generated`, `invalid_cached_artifact`,
   *   `malformed_body` / `schema_mismatch` (with `path`), `route_absent`, `timeout`, `cancelled`.
   */
  async fetchDataset(key: string, opts: FetchDatasetOptions): Promise<DatasetResult> {
    if (typeof key !== "string" || key.trim() === "") throw new PpmError("invalid_request", "A dataset key is required.");
    const format = opts.format;
    if (format !== "json" && format !== "csv" && format !== "odata") {
      throw new PpmError("invalid_request", `Unknown dataset format "${String(format)}"; use json, csv or odata.`);
    }
    const signal = opts.signal;
    // The manifest gives the company id (cache scope) and CSV column types. Auth failures surface here first.
    let manifest: ManifestInfo | undefined;
    try {
      manifest = this.manifestCache ?? (await this.manifest({ signal }));
    } catch (e) {
      if (isPpmError(e, "cancelled", "unauthorized", "bi_reporting_disabled", "timeout")) throw e;
      manifest = undefined;
    }
    const storeKey = validatorKey(this.scope, key, format);
    const conditional = opts.conditional ?? true;
    const stored = opts.validators ?? (conditional ? await this.store.get(storeKey) : undefined);
    const send: Validators | undefined = conditional && stored && (stored.etag || stored.lastModified) ? stored : undefined;

    // Fallback when headers were unreadable last time: compare the manifest's generation time.
    let freshEntry: ManifestDatasetInfo | undefined;
    if (conditional && stored && !send && stored.generatedAt) {
      try {
        const fresh = await this.manifest({ signal });
        freshEntry = fresh.datasets.find((d) => d.key === key);
        const gen = freshEntry ? exportGeneration(freshEntry) : null;
        if (gen !== null && gen === stored.generatedAt) {
          const v: Validators = { ...stored };
          await this.store.set(storeKey, v);
          return { status: "unchanged", validators: v };
        }
      } catch (e) {
        if (isPpmError(e, "cancelled")) throw e;
      }
    }
    const entry = freshEntry ?? manifest?.datasets.find((d) => d.key === key);
    const path = format === "json" ? PATHS.exportJson(key) : format === "csv" ? PATHS.exportCsv(key) : PATHS.odataDataset(key);
    const columnsForOData = format === "odata" ? await this.odataColumns(key, entry, signal) : undefined;

    const spec: RequestSpec = {
      method: "GET",
      group: "reporting",
      path,
      datasetKey: key,
      validators: send,
      accept: format === "csv" ? "text/csv" : format === "odata" ? ODATA_JSON_ACCEPT : "application/json",
      signal,
    };
    // The transport reports unknown errors in a body as an interrupted response; a sink's own error
    // (e.g. a query that does not fit the columns) is kept and thrown as it is.
    let sinkError: { error: unknown } | undefined;
    // What went into the sink, for the checks a table would get (columns, row count).
    let streamedRows = 0;
    let streamedColumns: readonly Column[] = [];
    const userSink = opts.sink;
    const keep = (e: unknown): never => {
      sinkError ??= { error: e };
      throw e;
    };
    // Plain try/catch per call (no closure per row: this runs for every row of the export).
    const sink: TableSink | undefined = userSink && {
      begin(cols, facts) {
        streamedColumns = cols;
        try {
          userSink.begin(cols, facts);
        } catch (e) {
          keep(e);
        }
      },
      row(cells) {
        streamedRows++;
        try {
          userSink.row(cells);
        } catch (e) {
          keep(e);
        }
      },
      end() {
        try {
          return userSink.end();
        } catch (e) {
          return keep(e);
        }
      },
      // The sink's own work between pieces of the body (the workbook writer sending a block to Excel,
      // issue #38) does not count against the service's timeout: the clock is held meanwhile.
      flush: userSink.flush
        ? async () => {
            try {
              await (holdClock ? holdClock(async () => userSink.flush?.()) : userSink.flush?.());
            } catch (e) {
              keep(e);
            }
          }
        : undefined,
      transient: userSink.transient,
      extraField: userSink.extraField
        ? (name) => {
            try {
              userSink.extraField?.(name);
            } catch (e) {
              keep(e);
            }
          }
        : undefined,
    };
    let holdClock: SentRequest["hold"];
    let requestTime = "";
    let headerGeneration: string | null = null;
    const result = await this.transport.send(spec, async (received) => {
      requestTime = received.requestTime;
      holdClock = received.hold;
      const h = received.response.headers;
      // Validators are stored (in the workbook, in the CLI's cache). One that carries a credential (a
      // hostile or broken service echoing it) is treated as absent, never kept.
      const clean = (v: string | null) => (v !== null && this.transport.redact(v) === v ? v : null);
      const etag = clean(h.get("ETag"));
      const lastModified = clean(h.get("Last-Modified"));
      const headerGen = clean(h.get(HEADERS.generatedAt));
      headerGeneration = headerGen;
      this.headersReadable = !!(etag || headerGen);
      if (received.response.status === 304) {
        await received.response.body?.cancel().catch(() => undefined);
        // A 304 answers a conditional request only. Without validators it would mean "keep what you
        // have" when there is nothing (first import, CLI without cache): that is a cache or proxy
        // answering for the service, not a result.
        if (!send) {
          throw this.transport.error(
            "unexpected_not_modified",
            `The service answered 304 Not Modified to the request for "${key}" (${FORMAT_LABEL[format]}), which carried no validators: a 304 only answers a conditional request, so there is no data to keep or write.`,
            { status: 304, datasetKey: key, requestTime: received.requestTime },
          );
        }
        const v: Validators = { etag: etag ?? send?.etag ?? null, lastModified: lastModified ?? send?.lastModified ?? null, generatedAt: headerGen ?? stored?.generatedAt ?? null };
        return { status: "unchanged" as const, validators: v };
      }
      const sent = await this.checkArrival(received, key, format);
      const meta: MetaInput = {
        key,
        schemaVersion: clean(h.get(HEADERS.schemaVersion)),
        generatedAt: headerGen ?? null,
        etag: etag ?? null,
        lastModified: lastModified ?? null,
        fetchedAt: this.now().toISOString(),
      };
      let typedBy = entry;
      if (format === "csv" && meta.schemaVersion && entry?.schemaVersion && meta.schemaVersion !== entry.schemaVersion) {
        // The cached manifest describes an older schema; CSV types must come from the current one.
        typedBy = (await this.manifest({ signal }).catch(() => undefined))?.datasets.find((d) => d.key === key) ?? entry;
      }
      const table = await this.readDatasetBody(sent, format, meta, typedBy, columnsForOData, opts.onProgress && ((n: number) => opts.onProgress?.(n)), opts.onBody && ((c: Uint8Array) => opts.onBody?.(c)), sink);
      // The body's generation time and schema go into the info line and the stored validators.
      for (const k of ["generatedAt", "schemaVersion"] as const) {
        const v = table.meta[k];
        if (typeof v === "string" && this.transport.redact(v) !== v) table.meta[k] = null;
      }
      // Without the header, a generation time from before the download is the safe one to keep:
      // a stale value can only cause an extra download later, never a missed change.
      if (!table.meta.generatedAt && entry) table.meta.generatedAt = exportGeneration(entry);
      if (!table.meta.schemaVersion && entry?.schemaVersion) table.meta.schemaVersion = entry.schemaVersion;
      const v: Validators = { etag: meta.etag, lastModified: meta.lastModified, generatedAt: table.meta.generatedAt };
      return { status: "updated" as const, table, validators: v };
    }).catch((e: unknown) => {
      throw sinkError ? sinkError.error : e;
    });
    if (result.status === "updated") {
      // With a sink the table is what the sink made of the rows (a summary): the checks look at
      // what was streamed into it. OData's "declared properties present" check needs the rows, so
      // it runs only without a sink.
      const received = opts.sink ? { columns: [...streamedColumns], rows: [], meta: result.table.meta } : result.table;
      this.checkColumns(received, format, entry, columnsForOData, requestTime);
      await this.checkRowCount(key, opts.sink ? streamedRows : result.table.rows.length, format, entry, headerGeneration, requestTime, signal);
    }
    await this.store.set(storeKey, result.validators);
    return result;
  }

  /**
   * Refuses a 200 that is not this dataset's export (see `bodyCheck.ts`): another dataset named in
   * `X-Service-Dataset-Key`, a `Content-Type` of another kind of document, or a body that starts as
   * markup (any form) or as JSON (CSV form). Returns the request with a body that still yields every
   * byte (the first ones were only looked at).
   */
  private async checkArrival(sent: SentRequest, key: string, format: DatasetFormat): Promise<SentRequest> {
    const h = sent.response.headers;
    const init = { datasetKey: key, requestTime: sent.requestTime, status: sent.response.status };
    const sentKey = h.get(HEADERS.datasetKey);
    if (sentKey !== null && sentKey !== key) {
      await sent.response.body?.cancel().catch(() => undefined);
      throw this.transport.error("unexpected_content", `The service answered the request for "${key}" with the dataset "${clip(sentKey, 60)}" (X-Service-Dataset-Key), so it was not read.`, {
        ...init,
        details: { arrived: "another dataset" },
      });
    }
    const contentType = h.get("Content-Type");
    const declared = contentKind(contentType);
    let response = sent.response;
    let head = "";
    if (response.body) {
      const peeked = await peekStream(response.body);
      head = peeked.head;
      response = new Response(peeked.stream, { status: response.status, statusText: response.statusText, headers: response.headers });
    }
    const sniffed = sniffKind(head, format);
    const declaredWrong = declared !== null && isWrongKind(declared, format);
    const wrong = sniffed !== null && isWrongKind(sniffed, format) ? sniffed : declaredWrong ? declared : null;
    if (wrong) {
      await response.body?.cancel().catch(() => undefined);
      const errorCode = wrong === "json" ? jsonErrorCode(head) : undefined;
      throw this.transport.error("unexpected_content", wrongKindMessage(wrong, format, key, { contentType: declaredWrong ? contentType : null, errorCode }), {
        ...init,
        action: wrongKindAction(wrong),
        details: { arrived: wrong, ...(contentType ? { contentType: clip(contentType, 100) } : {}) },
      });
    }
    return { ...sent, response };
  }

  /**
   * The JSON form declares its own columns: every column the manifest lists for the dataset must be
   * among them (the CSV header is checked the same way while it is read). OData rows may omit null
   * properties, so presence is not required there; but rows that carry none of the properties
   * `$metadata` declares, only others, are another collection.
   */
  private checkColumns(table: Table, format: DatasetFormat, entry: ManifestDatasetInfo | undefined, declared: Column[] | undefined, requestTime: string): void {
    if (format === "odata") {
      const n = declared?.length ?? 0;
      if (n === 0 || table.columns.length === n || table.rows.length === 0) return;
      if (table.rows.some((row) => row.slice(0, n).some((v) => v !== null))) return;
      const extra = table.columns.slice(n).map((c) => `"${clip(c.name, 40)}"`);
      throw this.transport.error(
        "unexpected_content",
        `The OData answer for "${table.meta.key}" carries none of the properties $metadata declares for it, only ${extra.slice(0, 5).join(", ")}${extra.length > 5 ? ` and ${extra.length - 5} more` : ""}. It is another collection.`,
        { datasetKey: table.meta.key, requestTime, details: { arrived: "other columns" } },
      );
    }
    if (format !== "json" || !entry || entry.columns.length === 0) return;
    const have = new Set(table.columns.map((c) => c.name));
    const missing = entry.columns.filter((c) => !have.has(c.name)).map((c) => `"${clip(c.name, 40)}"`);
    if (missing.length === 0) return;
    throw this.transport.error(
      "unexpected_content",
      `The JSON answer for "${table.meta.key}" does not have the dataset's columns: it lacks ${missing.slice(0, 5).join(", ")}${missing.length > 5 ? ` and ${missing.length - 5} more` : ""} of the ${entry.columns.length} the manifest lists. It is another document, such as another dataset's export.`,
      { datasetKey: table.meta.key, requestTime, details: { arrived: "other columns" } },
    );
  }

  /**
   * CSV and OData carry no row count, so a body cut at a row boundary reads as a complete, shorter
   * table. The manifest's `row_count` for the same generation is the check: the generation comes
   * from `X-Service-Generated-At`; without that header (hidden by CORS), the manifest is read again
   * after the download and the count is only compared when the generation did not move meanwhile.
   * When no generation can be matched, nothing is claimed either way.
   */
  private async checkRowCount(
    key: string,
    got: number,
    format: DatasetFormat,
    before: ManifestDatasetInfo | undefined,
    headerGen: string | null,
    requestTime: string,
    signal?: AbortSignal,
  ): Promise<void> {
    if (format === "json") return; // the export's own row_count is checked while it is read
    const fresh = async (): Promise<ManifestDatasetInfo | undefined> => {
      try {
        return (await this.manifest({ signal })).datasets.find((d) => d.key === key);
      } catch (e) {
        if (isPpmError(e, "cancelled")) throw e;
        return undefined;
      }
    };
    let entry = before;
    let generation = headerGen;
    if (!entry || (generation !== null && exportGeneration(entry) !== generation)) {
      entry = await fresh();
    } else if (generation === null) {
      const after = await fresh();
      generation = after && exportGeneration(after) === exportGeneration(entry) ? exportGeneration(entry) : null;
      entry = after;
    }
    if (!entry || entry.rowCount === null || generation === null || exportGeneration(entry) !== generation) return;
    if (got === entry.rowCount) return;
    throw this.transport.error(
      "incomplete_export",
      `The ${FORMAT_LABEL[format]} form of "${key}" arrived with ${got.toLocaleString("en-US")} row${got === 1 ? "" : "s"}, but the manifest lists ${entry.rowCount.toLocaleString("en-US")} for the export generated at ${utcMinutes(generation)}: ${got < entry.rowCount ? "the body was cut short" : "it does not match the export"}, so it was not used.`,
      { datasetKey: key, requestTime, details: { rowsReceived: got, manifestRowCount: entry.rowCount, generatedAt: generation } },
    );
  }

  /** Columns of an OData entity set: from `$metadata`, else the manifest, else inferred from values. */
  private async odataColumns(key: string, entry: ManifestDatasetInfo | undefined, signal?: AbortSignal): Promise<Column[]> {
    try {
      const md = await this.metadata({ signal });
      const set = md.entitySets.find((s) => s.name === key);
      if (set && set.columns.length > 0) return set.columns;
    } catch (e) {
      if (isPpmError(e, "cancelled", "unauthorized", "bi_reporting_disabled", "timeout")) throw e;
    }
    return entry?.columns ?? [];
  }

  private async readDatasetBody(
    sent: SentRequest,
    format: DatasetFormat,
    meta: MetaInput,
    entry: ManifestDatasetInfo | undefined,
    odataColumns: Column[] | undefined,
    onProgress?: (n: number) => void,
    onBody?: (chunk: Uint8Array) => void,
    sink?: TableSink,
  ): Promise<Table> {
    // Without a readable stream (old webviews, some fetch shims) the bytes are read in one go.
    const raw = sent.response.body ?? (format === "csv" || onBody ? bytesStream(new Uint8Array(await sent.response.arrayBuffer())) : null);
    const body = raw ? yielding(onBody ? tapped(raw, onBody) : raw) : raw;
    const where = `The ${format === "odata" ? "OData" : format.toUpperCase()} export of "${meta.key}"`;
    try {
      if (format === "csv") {
        const builder = new CsvTableBuilder(entry?.columns, meta.key, sink);
        await parseCsvStream(
          body!,
          (fields, i, joined) => {
            builder.add(fields, i, joined);
            if (onProgress && i > 0 && i % 1000 === 0) onProgress(builder.count);
          },
          sent.signal,
          sink?.flush ? () => sink.flush!() : undefined,
        );
        const table = builder.finish(meta);
        onProgress?.(builder.count);
        return table;
      }
      if (body) {
        // Rows are parsed and converted batch by batch as the body arrives (see jsonRows.ts).
        const columns = format === "json" ? entry?.columns : (odataColumns ?? []);
        let parsed = 0;
        const table = await tableFromJsonStream(body, format, meta, columns, {
          signal: sent.signal,
          onProgress: (n) => {
            parsed = n;
            onProgress?.(n);
          },
          sink,
        });
        onProgress?.(sink ? parsed : table.rows.length);
        return table;
      }
      const parsed = parseJsonLossless(await readBodyText(sent.response));
      const table = format === "json" ? tableFromJsonExport(parsed, meta, entry?.columns) : tableFromOData(parsed, meta, odataColumns ?? []);
      onProgress?.(table.rows.length);
      if (!sink) return table;
      // No readable stream: the body was read whole anyway; the sink still gives the result.
      await passThrough(table.rows, table.columns, sink);
      return { ...table, ...sink.end() };
    } catch (e) {
      if (e instanceof BodyShapeError) {
        if (e.kind === "unexpected_content") throw this.transport.error(e.kind, e.message, { path: e.path, datasetKey: meta.key, details: { arrived: "other content" } });
        throw this.transport.error(e.kind, `${where} could not be read: ${e.message} (at ${e.path}).`, { path: e.path, datasetKey: meta.key });
      }
      if (e instanceof CsvSyntaxError) {
        throw this.transport.error("malformed_body", `${where} could not be read: it is not valid CSV (${e.message}, record ${e.line}).`, { path: `record ${e.line}`, datasetKey: meta.key });
      }
      throw e;
    }
  }

  // ---------------------------------------------------------------- snapshots

  /**
   * Rows of one snapshot endpoint, validated for the documented fields; unknown fields (custom
   * fields are top-level display-name keys) pass through untouched.
   */
  async fetchSnapshotRows(endpoint: SnapshotEndpoint, opts: CallOptions = {}): Promise<Record<string, unknown>[]> {
    const path = PATHS.snapshot[endpoint];
    if (!path) throw new PpmError("invalid_request", `Unknown snapshot endpoint "${String(endpoint)}".`);
    const body = await this.getJson({ method: "GET", group: "snapshot", path, signal: opts.signal });
    try {
      return validateSnapshotRows(endpoint, body);
    } catch (e) {
      if (e instanceof BodyShapeError) throw this.transport.error("schema_mismatch", `The ${endpoint} snapshot does not have the documented shape: ${e.message} (at ${e.path}).`, { path: e.path });
      throw e;
    }
  }

  /**
   * A snapshot as a table. `combinedResources` fetches both resource snapshots and removes
   * overlapping `non_project_work` cells (never `project_work` rows).
   *
   * Snapshots carry no documented validators, so `table.meta.etag` is a content fingerprint
   * (`sha256:<hex>` of columns and cells): a refresh whose fingerprint equals the stored one has
   * not changed.
   */
  async fetchSnapshot(source: SnapshotSource, opts: CallOptions = {}): Promise<Table> {
    let rows: Record<string, unknown>[];
    if (source === "combinedResources") {
      const [p, q] = await Promise.all([this.fetchSnapshotRows("projectResources", opts), this.fetchSnapshotRows("proposalResources", opts)]);
      rows = combineResources(p, q);
    } else {
      rows = await this.fetchSnapshotRows(source, opts);
    }
    const m = await this.manifestIfAvailable(opts.signal);
    const numeric = new Set((m?.customFields ?? []).filter((f) => f.type?.toLowerCase() === "numeric").map((f) => f.name));
    const all = new Set((m?.customFields ?? []).map((f) => f.name));
    try {
      return snapshotTable(source, rows, { numericCustomFields: numeric, customFields: all, fetchedAt: this.now().toISOString() });
    } catch (e) {
      if (e instanceof BodyShapeError) throw this.transport.error("schema_mismatch", `The ${source} snapshot could not be read: ${e.message} (at ${e.path}).`, { path: e.path });
      throw e;
    }
  }

  // ---------------------------------------------------------------- records

  /** Retrieves one project or proposal by its `project_token`. */
  async getRecord(kind: RecordKind, projectToken: string, opts: RecordReadOptions = {}): Promise<RecordResult> {
    const path = this.recordPath(kind);
    if (typeof projectToken !== "string" || projectToken.trim() === "") throw new PpmError("invalid_request", "A project token is required to read a record.");
    const body = await this.getJson({ method: "GET", group: "record", path, recordToken: projectToken, signal: opts.signal });
    return this.recordResult(body, opts.customFieldNames, opts.signal);
  }

  /**
   * Creates a project or proposal. `custom_fields` values must be strings; numeric ones are checked
   * against the spec's rule before anything is sent (the server's 400 is still handled).
   */
  async createRecord(kind: RecordKind, input: RecordInput, opts: RecordWriteOptions = {}): Promise<RecordResult> {
    const path = this.recordPath(kind);
    await this.checkCustomFields(input, opts);
    const body = await this.getJson({ method: "POST", group: "record", path, body: input, hasCustomFields: !!input.custom_fields, signal: opts.signal });
    return this.recordResult(body, undefined, opts.signal);
  }

  /** Updates a project or proposal (target named by `project_token`); same checks as {@link createRecord}. */
  async updateRecord(kind: RecordKind, projectToken: string, input: RecordInput, opts: RecordWriteOptions = {}): Promise<RecordResult> {
    const path = this.recordPath(kind);
    if (typeof projectToken !== "string" || projectToken.trim() === "") throw new PpmError("invalid_request", "A project token is required to update a record.");
    await this.checkCustomFields(input, opts);
    const body = await this.getJson({ method: "PUT", group: "record", path, recordToken: projectToken, body: input, hasCustomFields: !!input.custom_fields, signal: opts.signal });
    return this.recordResult(body, undefined, opts.signal);
  }

  private recordPath(kind: RecordKind): string {
    const path = PATHS.record[kind];
    if (!path) throw new PpmError("invalid_request", `Unknown record kind "${String(kind)}"; use project or proposal.`);
    return path;
  }

  private async checkCustomFields(input: RecordInput, opts: RecordWriteOptions): Promise<void> {
    if (!isObject(input)) throw new PpmError("invalid_request", "The record body must be an object.");
    const cf = input.custom_fields;
    if (cf === undefined) return;
    if (!isObject(cf)) throw new PpmError("invalid_custom_field", "`custom_fields` must be an object of display name to text value.");
    for (const [name, value] of Object.entries(cf)) {
      if (typeof value !== "string") {
        throw new PpmError("invalid_custom_field", `The custom field "${name}" must be sent as text (got ${value === null ? "null" : typeof value}).`, { details: { field: name } });
      }
    }
    let numeric = opts.numericFields;
    if (!numeric) {
      const m = await this.manifestIfAvailable(opts.signal);
      numeric = (m?.customFields ?? []).filter((f) => f.type?.toLowerCase() === "numeric").map((f) => f.name);
    }
    for (const name of numeric) {
      if (!(name in cf)) continue;
      const check = validateNumericCustomField(cf[name]);
      if (!check.ok) {
        throw new PpmError("invalid_custom_field", `The numeric custom field "${name}" has an invalid value: ${check.reason}.`, { details: { field: name, value: cf[name] } });
      }
    }
  }

  private async recordResult(body: unknown, names: readonly string[] | undefined, signal?: AbortSignal): Promise<RecordResult> {
    if (!isObject(body)) throw this.shape("the record response is not a JSON object", "(root)", "schema_mismatch");
    let fieldNames = names;
    if (!fieldNames) fieldNames = (await this.manifestIfAvailable(signal))?.customFields.map((f) => f.name) ?? [];
    const customFields: Record<string, string | null> = {};
    const nested = isObject(body.custom_fields) ? body.custom_fields : {};
    for (const [k, v] of Object.entries(nested)) customFields[k] = normalizeCustomFieldForDisplay(v);
    for (const n of fieldNames) if (n in body) customFields[n] = normalizeCustomFieldForDisplay(body[n]);
    return { record: body, customFields };
  }

  // ---------------------------------------------------------------- capabilities

  /** Which endpoint groups this environment offers (a route can be absent), so the UI can hide the rest. */
  async probe(opts: CallOptions = {}): Promise<ProbeResult> {
    const outcome = async (spec: RequestSpec, okOn4xx: boolean): Promise<GroupProbe> => {
      try {
        await this.transport.send(spec, async ({ response }) => void (await response.body?.cancel().catch(() => undefined)));
        return { state: "available" };
      } catch (e) {
        if (!(e instanceof PpmError)) throw e;
        if (e.code === "cancelled") throw e;
        if (e.code === "route_absent") return { state: "absent" };
        if (e.code === "unauthorized") return { state: "unauthorized", error: e.toJSON() };
        if (e.code === "bi_reporting_disabled") return { state: "disabled", error: e.toJSON() };
        if (e.code === "record_credentials_missing") return { state: "no_credentials", error: e.toJSON() };
        if (okOn4xx && e.status !== undefined && e.status >= 400 && e.status < 500 && e.status !== 429) return { state: "available" };
        return { state: "error", error: e.toJSON() };
      }
    };
    const [reporting, snapshot, recordRaw] = await Promise.all([
      outcome({ method: "GET", group: "reporting", path: PATHS.odataRoot, signal: opts.signal }, false),
      outcome({ method: "GET", group: "snapshot", path: PATHS.snapshot.projects, signal: opts.signal }, false),
      // No record-token: a 400/404 with a service body still proves the route and the credentials.
      this.connection.apiAuth && this.connection.apiSecret
        ? outcome({ method: "GET", group: "record", path: PATHS.record.project, signal: opts.signal }, true)
        : outcome({ method: "GET", group: "record", path: PATHS.record.project, noCredentials: true, signal: opts.signal }, false).then((r) =>
            r.state === "absent" ? r : { state: "no_credentials" as const },
          ),
    ]);
    const result: ProbeResult = {
      reporting: reporting.state === "available",
      snapshot: snapshot.state === "available",
      record: recordRaw.state === "available" ? true : recordRaw.state === "absent" ? false : "unknown",
      details: { reporting, snapshot, record: recordRaw },
    };
    if (this.headersReadable !== undefined) result.corsExposesHeaders = this.headersReadable;
    return result;
  }

  /**
   * Checks, as a browser would see it, whether the deployment's CORS lets a task pane served from
   * `origin` call the reporting endpoints and read the validator headers. Meaningful in Node only
   * (browsers do not let script set `Origin` or see these headers); used by the CLI's `doctor`.
   *
   * When the connection has record credentials, also sends the preflight of a record write
   * (`OPTIONS /api/v1/project`, `PUT`, the record headers) and reports it in `recordPreflightOk`;
   * records are optional, so that result does not change `ok`.
   */
  /**
   * Whether a dataset's export can be downloaded now: its JSON export is requested and only the
   * answer's status is read (the body is cancelled). The manifest lists an export that may still be
   * unusable (issue #37: `ppm doctor` counted timesheets as usable, whose every request answers 422).
   * @returns null when the service answers 2xx, else the error the download would raise.
   */
  async probeExport(key: string, opts: CallOptions = {}): Promise<PpmError | null> {
    try {
      await this.transport.send({ method: "GET", group: "reporting", path: PATHS.exportJson(key), datasetKey: key, accept: "application/json", signal: opts.signal }, async ({ response }) => {
        await response.body?.cancel().catch(() => undefined);
      });
      return null;
    } catch (e) {
      if (isPpmError(e, "cancelled") || !(e instanceof PpmError)) throw e;
      return e;
    }
  }

  async checkCors(origin: string, opts: CallOptions = {}): Promise<CorsReport> {
    const lowerList = (v: string | null) => (v ?? "").split(",").map((s) => s.trim().toLowerCase()).filter(Boolean);
    const preflight = (group: "reporting" | "record", path: string, method: string, headers: readonly string[]) =>
      this.transport
        .send(
          {
            method: "OPTIONS",
            group,
            path,
            noCredentials: true,
            extraHeaders: { Origin: origin, "Access-Control-Request-Method": method, "Access-Control-Request-Headers": headers.join(",").toLowerCase() },
            signal: opts.signal,
          },
          async ({ response }) => {
            await response.body?.cancel().catch(() => undefined);
            return {
              status: response.status,
              allowOrigin: response.headers.get("Access-Control-Allow-Origin"),
              allowHeaders: lowerList(response.headers.get("Access-Control-Allow-Headers")),
              allowMethods: lowerList(response.headers.get("Access-Control-Allow-Methods")),
            };
          },
        )
        .catch((e: unknown) => {
          if (isPpmError(e, "cancelled")) throw e;
          return { status: 0, allowOrigin: null as string | null, allowHeaders: [] as string[], allowMethods: [] as string[] };
        });
    const missingOf = (allowed: readonly string[], needed: readonly string[]) => (allowed.includes("*") ? [] : needed.filter((h) => !allowed.includes(h.toLowerCase())));
    // Basic mode sends Authorization on reporting calls; snapshots still send Company-Api-Token.
    const neededHeaders = this.connection.authMode === "basic" ? [...NEEDED_REQUEST_HEADERS, "Authorization"] : NEEDED_REQUEST_HEADERS;
    const pre = await preflight("reporting", PATHS.manifest, "GET", neededHeaders);
    const originOk = (v: string | null) => v === "*" || v === origin;
    const missingRequestHeaders = missingOf(pre.allowHeaders, neededHeaders);
    const m = this.manifestCache ?? (await this.manifestIfAvailable(opts.signal));
    const candidate = m?.datasets.filter((d) => d.usable).sort((a, b) => (a.rowCount ?? 0) - (b.rowCount ?? 0))[0];
    let exposed: string[] = [];
    let allowOrigin = pre.allowOrigin;
    if (candidate) {
      const r = await this.transport
        .send({ method: "GET", group: "reporting", path: PATHS.exportCsv(candidate.key), datasetKey: candidate.key, accept: "text/csv", extraHeaders: { Origin: origin }, signal: opts.signal }, async ({ response }) => {
          await response.body?.cancel().catch(() => undefined);
          return { allowOrigin: response.headers.get("Access-Control-Allow-Origin"), exposed: lowerList(response.headers.get("Access-Control-Expose-Headers")) };
        })
        .catch((e: unknown) => {
          if (isPpmError(e, "cancelled")) throw e;
          return { allowOrigin: null as string | null, exposed: [] as string[] };
        });
      exposed = r.exposed;
      allowOrigin = r.allowOrigin ?? allowOrigin;
    }
    const missingExposedHeaders = exposed.includes("*") ? [] : NEEDED_EXPOSED_HEADERS.filter((h) => !exposed.includes(h.toLowerCase()));
    const preflightOk = pre.status >= 200 && pre.status < 300 && originOk(pre.allowOrigin) && missingRequestHeaders.length === 0;
    const report: CorsReport = {
      origin,
      preflightOk,
      allowOrigin,
      allowHeaders: pre.allowHeaders,
      missingRequestHeaders,
      exposedHeaders: exposed,
      missingExposedHeaders: candidate ? missingExposedHeaders : [],
      checkedDataset: candidate?.key ?? null,
      ok: preflightOk && originOk(allowOrigin) && (!candidate || missingExposedHeaders.length === 0),
    };
    if (this.connection.apiAuth && this.connection.apiSecret) {
      const rec = await preflight("record", PATHS.record.project, "PUT", NEEDED_RECORD_REQUEST_HEADERS);
      const recordMissingRequestHeaders = missingOf(rec.allowHeaders, NEEDED_RECORD_REQUEST_HEADERS);
      const recordMissingMethods = missingOf(rec.allowMethods, NEEDED_RECORD_METHODS);
      report.recordPreflightOk = rec.status >= 200 && rec.status < 300 && originOk(rec.allowOrigin) && recordMissingRequestHeaders.length === 0 && recordMissingMethods.length === 0;
      report.recordMissingRequestHeaders = recordMissingRequestHeaders;
      report.recordMissingMethods = recordMissingMethods;
    }
    return report;
  }

  // ---------------------------------------------------------------- helpers

  private async getJson(spec: RequestSpec): Promise<unknown> {
    return this.transport.send(spec, async ({ response }) => {
      if (response.status === 204) return null;
      const text = await response.text();
      try {
        return parseJsonLossless(text);
      } catch (e) {
        if (e instanceof BodyShapeError) throw this.transport.error("malformed_body", `The response of ${spec.method} ${spec.path} is not JSON (${e.message}).`, { path: e.path, datasetKey: spec.datasetKey });
        throw e;
      }
    });
  }

  private shape(message: string, path: string, code: "malformed_body" | "schema_mismatch"): PpmError {
    return this.transport.error(code, `The service's response does not have the documented shape: ${message}.`, { path });
  }
}
