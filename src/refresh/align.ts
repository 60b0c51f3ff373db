/**
 * Which old rows are known, from their fingerprints alone, to hold exactly a new row's cells (issue
 * #24, item 3). Used only where Excel's block checksums prove the old rows are still what was written
 * (`src/workbook/checksums.ts`): such a row needs no read-back, its cells are the new row's.
 *
 * A fingerprint is 42 bits, so a match is only trusted where it is expected: old rows are aligned with
 * new rows in order (both keep the export's order), each old row looked for within `window` rows of
 * where the last match puts it. A row farther away (many rows inserted or removed in between) is
 * accepted only when the next `RUN - 1` old rows match at the same offset too (a false run has
 * probability 2^-(42·RUN)). So a wrong match needs a 42-bit collision inside the window:
 * about window × 2^-42 per changed row (≈ 1e-10 with the default window).
 */
const RUN = 4;

/**
 * @returns for every old row, the new row with the same fingerprint it is aligned with, or -1
 * (a removed or changed record, or one too far away to be trusted: read from the table instead).
 */
export function alignByFingerprint(oldH: readonly string[], newH: readonly string[], window = 256): Int32Array {
  const out = new Int32Array(oldH.length).fill(-1);
  const at = new Map<string, number[]>();
  newH.forEach((h, j) => {
    const list = at.get(h);
    if (list) list.push(j);
    else at.set(h, [j]);
  });
  /** First index of `list` that is ≥ `min` (binary search). */
  const from = (list: number[], min: number): number => {
    let lo = 0, hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (list[mid] < min) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  let next = 0; // the next new row a match may take (alignment is monotone)
  let offset = 0; // new index − old index of the last match
  for (let i = 0; i < oldH.length; i++) {
    const list = at.get(oldH[i]);
    if (!list) continue;
    const k = from(list, next);
    if (k >= list.length) continue;
    // The candidate nearest to where the last offset puts this row, not before `next`.
    const expected = Math.max(next, i + offset);
    let best = -1;
    const q = from(list, expected);
    for (const cand of [q - 1, q]) {
      if (cand < k || cand >= list.length || Math.abs(list[cand] - expected) > window) continue;
      if (best < 0 || Math.abs(list[cand] - expected) < Math.abs(best - expected)) best = list[cand];
    }
    if (best < 0) {
      // Far away: trusted only as the start of a run at one offset.
      const j = list[k];
      let run = 1;
      while (run < RUN && i + run < oldH.length && j + run < newH.length && oldH[i + run] === newH[j + run]) run++;
      if (run < RUN) continue;
      best = j;
    }
    out[i] = best;
    next = best + 1;
    offset = best - i;
  }
  return out;
}
