import { describe, expect, it } from "vitest";
import { api, createAgent, createTenant, eventually } from "./helpers";

describe("agents chained through the journal", () => {
  it("a subscription-woken playbook agent creates a follow-up task, which wakes a second agent", async () => {
    const { key } = await createTenant();
    const gym = (await api("POST", "/v1/journal/categories", { key, body: { name: "Gym" } })).body;
    const task = (await api("POST", "/v1/journal/tasks", { key, body: { title: "Run 5k", categoryId: gym.id } })).body;

    const coach = await createAgent(key, {
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
    });
    const watcher = await createAgent(key, { displayName: "Watcher", allowedCategoryIds: [gym.id] });
    const coachSub = await api("POST", `/v1/agents/${coach.id}/subscriptions`, {
      key,
      body: { tokens: [{ tokenClass: "subtypeToken", tokenNamespace: "task.status", tokenValue: "done" }], predicate: { eq: ["task.categoryId", gym.id] } },
    });
    expect(coachSub.status).toBe(201);
    const watcherSub = await api("POST", `/v1/agents/${watcher.id}/subscriptions`, {
      key,
      body: { tokens: [{ tokenClass: "subtypeToken", tokenNamespace: "journal.op", tokenValue: "create" }], predicate: { eq: ["task.categoryId", gym.id] } },
    });
    expect(watcherSub.status).toBe(201);

    const done = await api("PATCH", `/v1/journal/tasks/${task.id}`, { key, body: { status: "done", version: task.version } });
    expect(done.status).toBe(200);

    const coachRun = await eventually(async () => {
      const runs = (await api("GET", `/v1/agents/${coach.id}/runs`, { key })).body.data;
      return runs.find((run: any) => run.reason === "subscription" && run.status === "completed");
    }, 20_000);
    expect(coachRun.trace.steps).toBe(2);
    const tasks = (await api("GET", `/v1/journal/tasks?categoryId=${gym.id}`, { key })).body.data;
    expect(tasks.map((t: any) => t.title).sort()).toEqual(["Run 5k", "Stretch after the run"]);
    const coachReply = (await api("GET", `/v1/agents/${coach.id}/messages`, { key })).body.data.find((m: any) => m.kind === "assistant");
    expect(coachReply.text).toBe("follow-up: Stretch after the run");

    const watcherRun = await eventually(async () => {
      const runs = (await api("GET", `/v1/agents/${watcher.id}/runs`, { key })).body.data;
      return runs.find((run: any) => run.reason === "subscription" && run.status === "completed");
    }, 20_000);
    expect(watcherRun).toBeTruthy();
    const observation = (await api("GET", `/v1/agents/${watcher.id}/messages`, { key })).body.data.find((m: any) => m.kind === "observation");
    const followUp = tasks.find((t: any) => t.title === "Stretch after the run");
    expect(observation.content.trigger.matchedEntityIds).toContain(followUp.id);
    expect(observation.metadata.authority).toBe("runtime_instruction");
  });
});
