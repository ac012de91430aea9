import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { config } from "../../src/config";
import { DevServer, raw, tenantRunsEnded } from "./harness";

// A saga converges on a real server: SIGKILL right after a mutating /tool line, restart on the same state, touch nothing.
let server: DevServer;

beforeAll(async () => {
  server = await DevServer.start();
});

afterAll(async () => {
  await server?.dispose();
});

describe("a saga cut off by a crash converges after the restart", () => {
  it("with nobody touching the agent: the watch alarm settles the run, one task is written, and the alarm path knows the agent's name", async () => {
    const { apiKey } = await server.tenant("saga-crash");
    const call = (method: string, path: string, body?: unknown) =>
      raw<any>(`${server.url}${path}`, { method, headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    const category = (await call("POST", "/v1/journal/categories", { name: "Gym" })).body;
    const agent = (
      await call("POST", "/v1/agents", {
        kind: "coach",
        displayName: "Saga",
        model: "builtin:playbook",
        allowedCategoryIds: [category.id],
        playbook: { rules: [{ when: { reason: "userInitiated" }, reply: "done: {{results.0.output.task.title}}" }] },
        // The reply after the tool streams for seconds, so the run is still in flight when the kill lands (a run that
        // ended before it would lose only its report, and prove nothing about recovery).
        modelOptions: { chunkDelayMs: 1500 },
      })
    ).body;
    const sent = await call("POST", `/v1/agents/${agent.id}/messages`, { text: `/tool create_task {"title":"Once","categoryId":"${category.id}"}` });
    expect(sent.status).toBe(202);
    expect(["queued", "running", "waiting", "ready"]).toContain((await call("GET", `/v1/agents/${agent.id}/runs/${sent.body.runKey}`)).body.status);
    await server.kill();
    await server.launch();

    // Untouched: only alarms (the saga watch, the watchdog) may settle the run. Its end is awaited on the tenant's run
    // counters (the TenantDO; this tenant's only run), which never touch the agent; only then is the agent itself read.
    const { seenAt } = await tenantRunsEnded(server.url, apiKey, 1, (Math.max(config.run.sagaWatchSeconds, config.run.watchdogSeconds) + 60) * 1000);
    const run = (await call("GET", `/v1/agents/${agent.id}/runs/${sent.body.runKey}`)).body;
    expect(run.status).toBe("completed");
    expect(Date.parse(run.endedAt)).toBeLessThanOrEqual(seenAt);
    const tasks = (await call("GET", `/v1/journal/tasks?categoryId=${category.id}`)).body.data;
    expect(tasks.map((task: any) => task.title)).toEqual(["Once"]);
    const results = (await call("GET", `/v1/agents/${agent.id}/messages`)).body.data.filter((m: any) => m.kind === "toolResult");
    expect(results).toHaveLength(1);
    expect(server.logs(400)).not.toContain("Attempting to read .name");
  }, 180_000);
});
