import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { config } from "../../src/config";
import { delay, DevServer, raw, runEndOnTenantStream } from "./harness";

// Issue 13.1 on a real server: SIGKILL right after a mutating /tool line, restart on the same state, touch nothing.
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
      })
    ).body;
    const sent = await call("POST", `/v1/agents/${agent.id}/messages`, { text: `/tool create_task {"title":"Once","categoryId":"${category.id}"}` });
    expect(sent.status).toBe(202);
    await delay(40);
    await server.kill();
    await server.launch();

    // Untouched: only alarms (the saga watch, the watchdog) may settle the run. Its end is awaited on the tenant
    // stream, served by the TenantDO, which never touches the agent; only then is the agent itself read.
    const end = await runEndOnTenantStream(server.client(apiKey), agent.id, sent.body.runKey, (Math.max(config.run.sagaWatchSeconds, config.run.watchdogSeconds) + 60) * 1000);
    expect(end.type).toBe("run.completed");
    const run = (await call("GET", `/v1/agents/${agent.id}/runs/${sent.body.runKey}`)).body;
    expect(run.status).toBe("completed");
    const tasks = (await call("GET", `/v1/journal/tasks?categoryId=${category.id}`)).body.data;
    expect(tasks.map((task: any) => task.title)).toEqual(["Once"]);
    const results = (await call("GET", `/v1/agents/${agent.id}/messages`)).body.data.filter((m: any) => m.kind === "toolResult");
    expect(results).toHaveLength(1);
    expect(server.logs(400)).not.toContain("Attempting to read .name");
  }, 180_000);
});
