import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineConfig, type TestProjectConfiguration } from "vitest/config";

/** Files that turn on test seams (VIGIL_FAULTS): they run in a project of their own (docs/decisions/test-seams.md). */
const SEAMS_FILES = "test/integration/**/*.seams.test.ts";

/**
 * An integration project: the Worker in workerd through the pool. `integration` runs the production configuration
 * (VIGIL_FAULTS unset: no test seam, nothing wrapped); `integration-seams` runs only the `*.seams.test.ts` files, with
 * the seams on. VIGIL_MODE=local is not a seam: it lets egress reach the loopback test servers.
 */
function integrationProject(name: string, faults: string | undefined): TestProjectConfiguration {
  return {
    plugins: [
      cloudflareTest({
        main: "./src/worker.ts",
        wrangler: { configPath: "./wrangler.toml" },
        miniflare: {
          bindings: {
            VIGIL_ADMIN_TOKEN: "test-admin-token",
            VIGIL_MASTER_KEY: "dGVzdC1tYXN0ZXIta2V5LTMyLWJ5dGVzLWxvbmctISE=",
            ...(faults ? { VIGIL_FAULTS: faults } : {}),
            // The credential cache's TTL (≤ config.auth.cacheTtlMs), honoured with the `settings` seam only: short, so
            // a revocation test sees it lapse.
            VIGIL_AUTH_CACHE_TTL_MS: "2000",
            // Local mode: the scripted providers and receivers are plain-http loopback servers.
            VIGIL_MODE: "local",
            // Info lines from background work can outlive a test file and race the pool's teardown.
            VIGIL_LOG_LEVEL: "warn",
          },
        },
      }),
    ],
    // One workerd per vitest worker, shared by the files it runs (the Worker is imported once, not per file);
    // every Durable Object is deleted after each file (docs/decisions.md "Suite time", "Plugin (session 6)").
    test: {
      name,
      include: faults ? [SEAMS_FILES] : ["test/integration/**/*.test.ts"],
      exclude: faults ? [] : [SEAMS_FILES],
      setupFiles: ["test/integration/reset-between-files.ts"],
      testTimeout: 30_000,
      isolate: false,
      maxWorkers: 2,
      // The seams files run after the production-configuration files and the e2e servers, beside the unit files
      // (projects sharing a group must share maxWorkers), so the machine never runs both projects' workerds at once.
      sequence: { groupOrder: faults ? 1 : 0 },
    },
  };
}

export default defineConfig({
  test: {
    projects: [
      {
        test: { name: "unit", include: ["test/unit/**/*.test.ts"], environment: "node", isolate: false, maxWorkers: 2, sequence: { groupOrder: 1 } },
      },
      integrationProject("integration", undefined),
      integrationProject("integration-seams", "enabled"),
      {
        test: {
          name: "e2e",
          include: ["test/e2e/**/*.test.ts"],
          environment: "node",
          testTimeout: 120_000,
          hookTimeout: 120_000,
          fileParallelism: false,
          globalSetup: ["test/e2e/shared-server.setup.ts"],
        },
      },
    ],
  },
});
