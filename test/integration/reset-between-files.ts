import { reset } from "cloudflare:test";
import { afterAll } from "vitest";

/**
 * Integration files share a runtime (vitest `isolate: false`, see docs/decisions/integration-test-pool.md): one workerd per
 * vitest worker runs file after file. Deleting every Durable Object after each file keeps the files as independent
 * as when each had its own workerd: no storage carries over, and the alarms of earlier files' agents (watchdogs,
 * saga watches, timers, retries) stop instead of piling up as background work under the next files.
 */
afterAll(async () => {
  await reset();
});
