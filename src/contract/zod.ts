/**
 * zod, configured once for the whole add-in: every schema module imports `z` from here, never from
 * "zod" itself (eslint's no-restricted-imports says so), so this runs before any schema is built.
 *
 * `jitless`: zod 4 compiles object schemas with `new Function` when it can, and first probes
 * whether it can by calling `new Function("")`. Under the pages' Content-Security-Policy (no
 * 'unsafe-eval') that probe is refused and reported as a violation, even though zod catches it.
 * Without the JIT, zod interprets its schemas: the same results, no eval (issue #22).
 */
import { z } from "zod";

z.config({ jitless: true });

export { z };
