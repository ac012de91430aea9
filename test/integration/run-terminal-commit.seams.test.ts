import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { agentDo, api, createAgent, createTenant, eventually, readSseUntil } from "./helpers";

const TERMINAL_EVENTS = new Set(["run.completed", "run.failed"]);

describe("a run's terminal state and its terminal event commit together", () => {
  it("a throw between the run's end and its terminal event leaves neither; the resumed run ends once and the stream sees it", async () => {
    const { tenantId, key } = await createTenant();
    const agent = await createAgent(key);
    const stub = agentDo(tenantId, agent.id);
    expect(await stub.armFault("run.beforeTerminalEvent")).toBe(true);
    const response = await SELF.fetch(`https://vigil.test/v1/agents/${agent.id}/messages`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify({ text: "end together" }),
    });
    expect(response.status).toBe(200);
    const runKey = response.headers.get("x-vigil-run-key")!;
    const streamed = readSseUntil(response, (frames) => frames.some((frame) => TERMINAL_EVENTS.has(frame.event)), 25_000);

    // The first attempt replied and threw at the boundary: the run is not ended, and no terminal event exists.
    const cut = await eventually(async () => {
      const run = (await api("GET", `/v1/agents/${agent.id}/runs/${runKey}`, { key })).body;
      const replied = (await api("GET", `/v1/agents/${agent.id}/messages`, { key })).body.data.some((m: any) => m.kind === "assistant");
      return replied && run.status === "running" ? run : undefined;
    });
    expect(cut).toMatchObject({ status: "running", endedAt: null, attempt: 1 });
    const before = (await stub.listEvents(0, 1000)) as Array<{ type: string; runKey: string | null }>;
    expect(before.filter((event) => TERMINAL_EVENTS.has(event.type))).toEqual([]);

    // Resumed like any cut-off run: it ends once, with exactly one terminal event, and the open stream receives it.
    const run = await eventually(async () => {
      await stub.watchdog();
      const current = (await api("GET", `/v1/agents/${agent.id}/runs/${runKey}`, { key })).body;
      return current.status === "completed" ? current : undefined;
    });
    expect(run.attempt).toBe(2);
    const after = (await stub.listEvents(0, 1000)) as Array<{ seq: number; type: string; runKey: string | null; data: any }>;
    const terminal = after.filter((event) => TERMINAL_EVENTS.has(event.type));
    expect(terminal.map((event) => [event.type, event.data.status, event.data.run.endedAt])).toEqual([["run.completed", "completed", run.endedAt]]);
    const frames = await streamed;
    expect(frames.filter((frame) => TERMINAL_EVENTS.has(frame.event)).map((frame) => [frame.data.data.status, frame.data.seq])).toEqual([["completed", terminal[0]!.seq]]);
  });
});
