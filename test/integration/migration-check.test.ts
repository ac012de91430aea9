import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import agentMigrations from "../../migrations/agent";
import tenantMigrations from "../../migrations/tenant";
import { lastAppliedMigration, MIGRATED_THROUGH, migratedThrough, migrationsPending } from "../../src/objects/shared/sqlite";
import { createAgent, createTenant, inDo, recordStatements, freshInstance } from "./helpers";

const newest = (m: { journal: { entries: ReadonlyArray<{ when: number }> } }) => Math.max(...m.journal.entries.map((entry) => entry.when));

/**
 * A started object skips drizzle's migrator (a transaction, a CREATE TABLE IF NOT EXISTS,
 * every migration file split) when one read says every journal entry is applied. The check must say "pending" for
 * a new object and for one behind any entry, or a migration would never run; and "nothing" for a migrated one.
 */
describe("the migrator's start-up check", () => {
  it("reads the newest applied migration of a real agent and tenant, and finds nothing pending", async () => {
    const tenant = await createTenant();
    const agentId: string = (await createAgent(tenant.key)).id;
    const agent = env.AGENT.get(env.AGENT.idFromName(`${tenant.tenantId}:${agentId}`));
    const applied = await inDo(agent, (_instance, state) => lastAppliedMigration(state.storage));
    expect(applied).toBe(newest(agentMigrations));
    expect(migrationsPending(applied, agentMigrations)).toBe(false);
    const tenantDo = env.TENANT.get(env.TENANT.idFromName(tenant.tenantId));
    const tenantApplied = await inDo(tenantDo, (_instance, state) => lastAppliedMigration(state.storage));
    expect(tenantApplied).toBe(newest(tenantMigrations));
    expect(migrationsPending(tenantApplied, tenantMigrations)).toBe(false);
  });

  it("finds no migrations table on a new object, and says pending", async () => {
    const fresh = env.AGENT.get(env.AGENT.idFromName(`migration-check:${crypto.randomUUID()}`));
    const before = await inDo(fresh, (_instance, state) => {
      // The constructor migrated already; drop the record to stand for an object that never ran a migration.
      state.storage.sql.exec('DROP TABLE "__drizzle_migrations"');
      return lastAppliedMigration(state.storage);
    });
    expect(before).toBeNull();
    expect(migrationsPending(null, agentMigrations)).toBe(true);
  });

  it("notes the newest migration in the object's key-value store: a start with the note reads no ledger, one without reads it and notes it again", async () => {
    const tenant = await createTenant();
    const agentId: string = (await createAgent(tenant.key)).id;
    const agent = env.AGENT.get(env.AGENT.idFromName(`${tenant.tenantId}:${agentId}`));
    const ledgerReads = await inDo(agent, async (instance, state) => {
      expect(migratedThrough(state.storage)).toBe(newest(agentMigrations));
      const ledgerReadsOfAStart = async () => {
        const { seen, stop } = recordStatements(state);
        try {
          // The check runs in the start's blockConcurrencyWhile, which a later one waits for.
          freshInstance(instance, state);
          await state.blockConcurrencyWhile(async () => undefined);
          return seen.filter((query) => query.includes("__drizzle_migrations")).length;
        } finally {
          stop();
        }
      };
      const reads = [await ledgerReadsOfAStart()];
      state.storage.kv.delete(MIGRATED_THROUGH);
      reads.push(await ledgerReadsOfAStart());
      expect(migratedThrough(state.storage)).toBe(newest(agentMigrations));
      return reads;
    });
    expect(ledgerReads).toEqual([0, 1]);
  });

  it("says pending when any journal entry is newer than the newest applied one", () => {
    const last = newest(agentMigrations);
    expect(migrationsPending(last - 1, agentMigrations)).toBe(true);
    expect(migrationsPending(last, agentMigrations)).toBe(false);
    expect(migrationsPending(Number.NaN, agentMigrations)).toBe(true);
  });
});
