/**
 * Stored validators for conditional dataset requests.
 *
 * Validators are keyed by environment + company + dataset + format ({@link validatorKey}), as the
 * spec requires client caches to be kept separate by company and environment: a 304 for one
 * company's ETag must never be taken as "unchanged" for another's table.
 */

/** What is remembered about the last successful download of a dataset in one format. */
export interface Validators {
  /** `ETag` response header, when readable. */
  etag?: string | null;
  /** `Last-Modified` response header, when readable. */
  lastModified?: string | null;
  /**
   * Generation time of the export (from `X-Service-Generated-At`, the JSON body or the manifest).
   * The fallback comparison when a deployment's CORS hides ETag/Last-Modified from the browser.
   */
  generatedAt?: string | null;
}

/**
 * Where validators are kept between refreshes. Implementations may be synchronous (memory,
 * `localStorage`, workbook settings) or asynchronous; the client awaits either.
 */
export interface ValidatorStore {
  get(key: string): Validators | undefined | Promise<Validators | undefined>;
  set(key: string, validators: Validators): void | Promise<void>;
  delete?(key: string): void | Promise<void>;
}

/** The key of one dataset's validators. `scope` comes from `connectionScope` (no secrets). */
export function validatorKey(scope: string, datasetKey: string, format: "json" | "csv" | "odata"): string {
  return `${scope}|dataset:${datasetKey}|format:${format}`;
}

/** True when there is something to send as a conditional request. */
export function hasValidators(v: Validators | undefined | null): v is Validators {
  return !!v && (!!v.etag || !!v.lastModified || !!v.generatedAt);
}

/** In-memory {@link ValidatorStore} (task pane session, tests). */
export class MemoryValidatorStore implements ValidatorStore {
  private readonly map = new Map<string, Validators>();
  get(key: string): Validators | undefined {
    const v = this.map.get(key);
    return v ? { ...v } : undefined;
  }
  set(key: string, validators: Validators): void {
    this.map.set(key, { ...validators });
  }
  delete(key: string): void {
    this.map.delete(key);
  }
  /** All stored keys (for diagnostics and tests). */
  keys(): string[] {
    return [...this.map.keys()];
  }
}
