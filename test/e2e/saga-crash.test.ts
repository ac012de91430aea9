import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { config } from "../../src/config";
import { delay, DevServer, eventually, raw } from "./harness";

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
    const restartedAt = Date.now();
    await server.launch();

    // Untouched past the watch interval and the watchdog: only alarms may have run.
    await delay(Math.max(config.run.sagaWatchSeconds, config.run.watchdogSeconds) * 1000 + 15_000 - (Date.now() - restartedAt));
    const firstLook = Date.now();
    const run = await eventually(async () => {
      const current = (await call("GET", `/v1/agents/${agent.id}/runs/${sent.body.runKey}`)).body;
      return ["queued", "running", "waiting", "ready"].includes(current.status) ? null : current;
    }, 30_000, 500);
    expect(run.status).toBe("completed");
    expect(Date.parse(run.endedAt)).toBeLessThan(firstLook);
    const tasks = (await call("GET", `/v1/journal/tasks?categoryId=${category.id}`)).body.data;
    expect(tasks.map((task: any) => task.title)).toEqual(["Once"]);
    const results = (await call("GET", `/v1/agents/${agent.id}/messages`)).body.data.filter((m: any) => m.kind === "toolResult");
    expect(results).toHaveLength(1);
    expect(server.logs(400)).not.toContain("Attempting to read .name");
  });
});
