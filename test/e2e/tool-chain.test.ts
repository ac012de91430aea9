import { beforeAll, describe, expect, it } from "vitest";
import { eventually, raw, type VigilServer } from "./harness";
import { sharedServer } from "./shared-server";

let server: VigilServer;
beforeAll(async () => {
  server = sharedServer();
});

describe("tools across agents, end to end", () => {
  it("a subscription-woken playbook agent creates a follow-up task through a saga, and that task wakes a second agent", async () => {
    const { apiKey } = await server.tenant("chain");
    const call = (method: string, path: string, body?: unknown) =>
      raw(`${server.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${apiKey}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    const gym = (await call("POST", "/v1/journal/categories", { name: "Gym" })).body as any;
    const task = (await call("POST", "/v1/journal/tasks", { title: "Run 5k", categoryId: gym.id })).body as any;
    const coach = (await call("POST", "/v1/agents", {
      kind: "coach",
      displayName: "Gym coach",
      model: "builtin:playbook",
      // create_follow_up_task is medium risk: under the default adaptive mode a new agent (trust 50) would wait for approval.
      controlMode: "ecosystem",
      allowedCategoryIds: [gym.id],
      playbook: {
        rules: [
          {
            when: { reason: "subscription", token: "subtypeToken|task.status|done" },
            tools: [{ name: "create_follow_up_task", args: { sourceTaskId: "{{observation.trigger.matchedEntityIds.0}}", newTaskTitle: "Stretch after the run" } }],
            reply: "follow-up: {{results.0.output.followUpTask.title}}",
          },
        ],
      },
    })).body as any;
    const watcher = (await call("POST", "/v1/agents", { kind: "watcher", displayName: "Watcher", allowedCategoryIds: [gym.id] })).body as any;
    expect((await call("POST", `/v1/agents/${coach.id}/subscriptions`, { tokens: [{ tokenClass: "subtypeToken", tokenNamespace: "task.status", tokenValue: "done" }], predicate: { eq: ["task.categoryId", gym.id] } })).status).toBe(201);
    expect((await call("POST", `/v1/agents/${watcher.id}/subscriptions`, { tokens: [{ tokenClass: "subtypeToken", tokenNamespace: "journal.op", tokenValue: "create" }], predicate: { eq: ["task.categoryId", gym.id] } })).status).toBe(201);

    expect((await call("PATCH", `/v1/journal/tasks/${task.id}`, { status: "done", version: task.version })).status).toBe(200);

    const coachRun = await eventually(async () => ((await call("GET", `/v1/agents/${coach.id}/runs`)).body as any).data.find((r: any) => r.status === "completed"), 60_000);
    expect(coachRun).toMatchObject({ reason: "subscription", status: "completed" });
    const titles = ((await call("GET", `/v1/journal/tasks?categoryId=${gym.id}`)).body as any).data.map((t: any) => t.title).sort();
    expect(titles).toEqual(["Run 5k", "Stretch after the run"]);
    const watcherRun = await eventually(async () => ((await call("GET", `/v1/agents/${watcher.id}/runs`)).body as any).data.find((r: any) => r.status === "completed"), 60_000);
    expect(watcherRun.reason).toBe("subscription");
    const kinds = ((await call("GET", `/v1/agents/${coach.id}/messages`)).body as any).data.map((m: any) => m.kind).reverse();
    expect(kinds).toEqual(["observation", "action", "toolResult", "assistant"]);
  });
});
