import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { DevServer } from "./harness";
import { SHARED_VARS } from "./shared-server";

/**
 * globalSetup of the e2e project: one `wrangler dev` for every file that does not need a private one
 * (each server start is a checkout snapshot and a wrangler + workerd boot).
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const logDir = mkdtempSync(join(tmpdir(), "vigil-e2e-shared-"));
  const logFile = join(logDir, "wrangler.log");
  const server = await DevServer.start({ vars: SHARED_VARS, logFile });
  project.provide("e2eSharedServer", { url: server.url, adminToken: server.adminToken, masterKey: server.masterKey, logFile });
  return async () => {
    await server.dispose();
    rmSync(logDir, { recursive: true, force: true });
  };
}
