import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { checkRecordedResponses, clearRecordedResponses } from "./contract";
import { DevServer } from "./harness";
import { SEAMS_VARS } from "./shared-server";

/**
 * globalSetup of the e2e project: two `wrangler dev` servers, started side by side, for every file that does not
 * need a private one (each server start is a checkout snapshot and a wrangler + workerd boot): the production one,
 * no test seam on, and the one with SEAMS_VARS for the `*.seams.test.ts` files.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const logDir = mkdtempSync(join(tmpdir(), "vigil-e2e-shared-"));
  const logFile = join(logDir, "wrangler.log");
  clearRecordedResponses();
  const seamsLogFile = join(logDir, "wrangler-seams.log");
  const [server, seams] = await Promise.all([
    DevServer.start({ logFile }),
    DevServer.start({ vars: SEAMS_VARS, logFile: seamsLogFile }),
  ]);
  project.provide("e2eSharedServer", { url: server.url, adminToken: server.adminToken, masterKey: server.masterKey, logFile });
  project.provide("e2eSeamsServer", { url: seams.url, adminToken: seams.adminToken, masterKey: seams.masterKey, logFile: seamsLogFile });
  const document = await (await fetch(`${server.url}/v1/openapi.json`)).json();
  return async () => {
    await Promise.all([server.dispose(), seams.dispose()]);
    rmSync(logDir, { recursive: true, force: true });
    // The contract: every response the run received is one the OpenAPI document describes (test/e2e/contract.ts).
    const { checked, violations } = checkRecordedResponses(document);
    if (violations.length === 0) return;
    // vitest reports a teardown error but keeps its exit status: the run fails through the exit code.
    process.exitCode = 1;
    throw new Error(`${violations.length} responses of ${checked} break the OpenAPI document:\n${violations.join("\n")}`);
  };
}
