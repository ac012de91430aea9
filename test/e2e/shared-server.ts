import { existsSync, readFileSync } from "node:fs";
import { inject } from "vitest";
import { ServerClients, type VigilServer } from "./harness";

/**
 * Two `wrangler dev` servers shared by the e2e files that only need a running server: the production one (no test
 * seam on) and the seams one (SEAMS_VARS). Both are started by the e2e project's globalSetup (shared-server.setup.ts)
 * and reached here through vitest's provide/inject. Every such file works in tenants of its own, so sharing a server
 * does not couple them; a file that restarts or kills its server, changes a server-wide setting or reads the whole log
 * starts a private one.
 */
export interface SharedServerInfo {
  url: string;
  adminToken: string;
  masterKey: string;
  /** wrangler's output, appended as it comes (the server lives in the vitest main process). */
  logFile: string;
}

declare module "vitest" {
  export interface ProvidedContext {
    e2eSharedServer: SharedServerInfo;
    e2eSeamsServer: SharedServerInfo;
  }
}

/**
 * The seams server's test seams (docs/decisions/test-seams.md). Each touches only what a test names, so they are
 * inert for the other files on it: `leaky` gateway endpoints get a field injected after the projection
 * (gateway.seams.test.ts), calls of the MCP tool `mcp_crashy_add_note` reset the TenantDO (mcp-client.seams.test.ts),
 * and an IdP's unknown `kid` refetches at once (jwks.seams.test.ts).
 */
export const SEAMS_VARS: Record<string, string> = {
  VIGIL_FAULTS: "faults,settings",
  VIGIL_FAULT_OVERSHARE: "leaky",
  VIGIL_FAULT_MCP_ABORT: "mcp_crashy_add_note",
  VIGIL_JWKS_COOLDOWN_MS: "0",
};

class SharedServer extends ServerClients implements VigilServer {
  constructor(private readonly info: SharedServerInfo) {
    super();
  }

  get url(): string {
    return this.info.url;
  }

  get adminToken(): string {
    return this.info.adminToken;
  }

  get masterKey(): string {
    return this.info.masterKey;
  }

  /** The last lines wrangler printed (for failure messages); the log holds every file's traffic. */
  logs(lines = 60): string {
    if (!existsSync(this.info.logFile)) return "";
    return readFileSync(this.info.logFile, "utf8").split("\n").slice(-lines).join("\n");
  }
}

/** The shared production server, no test seam on (started once per e2e run by the project's globalSetup). */
export function sharedServer(): VigilServer {
  const info = inject("e2eSharedServer");
  if (!info) throw new Error("no shared e2e server: run e2e files through the vitest e2e project (its globalSetup starts it)");
  return new SharedServer(info);
}

/** The shared server with the SEAMS_VARS seams on, for the `*.seams.test.ts` files that need them. */
export function sharedSeamsServer(): VigilServer {
  const info = inject("e2eSeamsServer");
  if (!info) throw new Error("no shared e2e seams server: run e2e files through the vitest e2e project (its globalSetup starts it)");
  return new SharedServer(info);
}
