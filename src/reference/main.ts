/**
 * CLI: `npm run service -- [--port N] [--dataset-rows financials=200000] [--absent snapshot]
 * [--no-expose-headers] [--allow-origin ORIGIN]... [--quiet]`. Binds 127.0.0.1 only; default port
 * 4100. `--allow-origin` (repeatable) lists the origins CORS answers, in place of the default (the
 * dev server's, https and http://localhost:3000; `npm start -- --port N` passes its own). Prints the
 * URL and the demo credentials (demo values only; they are documented) and stops on SIGINT/SIGTERM.
 */
import { COMPANIES } from "./data";
import { allowedOrigins, DEFAULT_ALLOWED_ORIGINS } from "./cors";
import { startReferenceService, type ReferenceServiceOptions } from "./server";
import { ROUTE_GROUPS, type RouteGroup } from "./state";

export const DEFAULT_PORT = 4100;

/** Parses CLI arguments; throws an Error with a readable message on bad input. */
export function parseArgs(argv: readonly string[]): ReferenceServiceOptions {
  const opts: ReferenceServiceOptions = { port: DEFAULT_PORT, datasetRows: {}, absentGroups: [], exposeHeaders: true, quiet: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const [flag, inline] = arg.includes("=") && arg.startsWith("--port=") ? ["--port", arg.slice(7)] : [arg, undefined];
    const next = (): string => {
      if (inline !== undefined) return inline;
      const v = argv[++i];
      if (v === undefined) throw new Error(`${flag} needs a value`);
      return v;
    };
    switch (flag) {
      case "--port": {
        const v = next();
        if (!/^\d+$/.test(v) || Number(v) > 65535) throw new Error(`--port must be 0-65535, got '${v}'`);
        opts.port = Number(v);
        break;
      }
      case "--dataset-rows": {
        const v = next();
        for (const pair of v.split(",")) {
          const m = /^([A-Za-z0-9_]+)=(\d+)$/.exec(pair.trim());
          if (!m) throw new Error(`--dataset-rows takes key=count[,key=count], got '${v}'`);
          opts.datasetRows![m[1]] = Number(m[2]);
        }
        break;
      }
      case "--absent": {
        for (const g of next().split(",")) {
          if (!ROUTE_GROUPS.includes(g as RouteGroup)) throw new Error(`--absent takes ${ROUTE_GROUPS.join("|")}, got '${g}'`);
          opts.absentGroups!.push(g as RouteGroup);
        }
        break;
      }
      case "--allow-origin": {
        const v = next();
        try {
          allowedOrigins([v]);
        } catch (e) {
          throw new Error(`--allow-origin: ${(e as Error).message}`);
        }
        opts.allowedOrigins = [...(opts.allowedOrigins ?? []), v];
        break;
      }
      case "--no-expose-headers":
        opts.exposeHeaders = false;
        break;
      case "--quiet":
        opts.quiet = true;
        break;
      default:
        throw new Error(`unknown argument '${arg}'`);
    }
  }
  return opts;
}

async function main(): Promise<void> {
  let opts: ReferenceServiceOptions;
  try {
    opts = parseArgs(process.argv.slice(2));
  } catch (e) {
    console.error(`reference service: ${(e as Error).message}`);
    console.error("usage: npm run service -- [--port N] [--dataset-rows financials=200000] [--absent snapshot|record|reporting] [--no-expose-headers] [--allow-origin ORIGIN]... [--quiet]");
    process.exitCode = 2;
    return;
  }
  let svc: Awaited<ReturnType<typeof startReferenceService>>;
  try {
    svc = await startReferenceService(opts);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== "EADDRINUSE" && code !== "EACCES") throw e;
    // Most often `npm start` runs, whose service holds the default port (issue #37: a bare
    // EADDRINUSE gave no hint). Say so, and what to type instead.
    const args = process.argv.slice(2).filter((a, i, all) => a !== "--port" && all[i - 1] !== "--port" && !a.startsWith("--port="));
    const other = (opts.port ?? DEFAULT_PORT) + 1;
    console.error(
      code === "EADDRINUSE"
        ? `reference service: port ${opts.port} is already in use (EADDRINUSE). If \`npm start\` is running, its reference service is there (it uses ${DEFAULT_PORT} unless given --service-port): use that one, stop it, or start this one on another port:`
        : `reference service: port ${opts.port} needs privileges this user does not have (EACCES). Choose another port:`,
    );
    console.error(`  npm run service -- --port ${other}${args.length ? ` ${args.join(" ")}` : ""}`);
    console.error(`and point a connection (Connect tab › Add connection) at http://localhost:${other}.`);
    process.exitCode = 1;
    return;
  }
  console.log(`PPM reference service listening on ${svc.url}`);
  console.log(`  CORS for ${(opts.allowedOrigins ?? DEFAULT_ALLOWED_ORIGINS).join(", ")} (--allow-origin); control hooks need the header X-PPM-Control: 1`);
  for (const c of COMPANIES) {
    console.log(
      `  company ${c.id}: Company-Api-Token ${c.token} (reporting ${c.reportingEnabled ? "enabled" : "disabled"}); ` +
        `records api-auth ${c.recordAuth}, api-secret ${c.recordSecret}`,
    );
  }
  const stop = (): void => {
    svc.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}

if (require.main === module) {
  main().catch((e: unknown) => {
    console.error(`reference service: ${e instanceof Error ? e.message : String(e)}`);
    process.exitCode = 1;
  });
}
