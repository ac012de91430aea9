import { afterEach, describe, expect, it, vi } from "vitest";
import { api, createAgent, createTenant, waitForRun } from "./helpers";

afterEach(() => vi.restoreAllMocks());

describe("tenant HTTP tools in a run", () => {
  it("an agent calls a registered HTTP tool through a saga: one signed request, the validated answer reaches the model", async () => {
    const { key } = await createTenant();
    const registered = await api("POST", "/v1/tools", {
      key,
      body: {
        name: "weather",
        description: "Today's weather for a city",
        inputSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false },
        url: "https://tools.example.com/weather",
        riskLevel: "low",
        capability: "taskRead",
      },
    });
    expect(registered.status).toBe(201);
    const seen: Array<{ url: string; headers: Headers; body: string }> = [];
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
      const request = new Request(input as RequestInfo, init);
      seen.push({ url: request.url, headers: request.headers, body: await request.clone().text() });
      return new Response(JSON.stringify({ forecast: "sunny" }), { headers: { "content-type": "application/json" } });
    });
    const agent = await createAgent(key, { model: "builtin:playbook", playbook: { rules: [{ when: { reason: "userInitiated" }, reply: "forecast: {{results.0.output.forecast}}" }] } });
    const sent = await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text: '/tool http_weather {"city":"Berlin"}' } });
    const run = await waitForRun(key, agent.id, sent.body.runKey);
    expect(run.status).toBe("completed");
    expect(seen).toHaveLength(1);
    expect(seen[0]!.url).toBe("https://tools.example.com/weather");
    expect(JSON.parse(seen[0]!.body)).toEqual({ city: "Berlin" });
    expect(seen[0]!.headers.get("vigil-signature")).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    const messages = (await api("GET", `/v1/agents/${agent.id}/messages`, { key })).body.data;
    const result = messages.find((m: any) => m.kind === "toolResult");
    expect(result.content).toMatchObject({ ok: true });
    expect(messages.find((m: any) => m.kind === "assistant").text).toContain("sunny");
    // The egress door recorded the request with its run.
    const audit = (await api("GET", "/v1/audit", { key })).body.data;
    expect(audit).toContainEqual(
      expect.objectContaining({ action: "egress.http_tool", detail: expect.objectContaining({ runKey: sent.body.runKey, purpose: "http_tool", host: "tools.example.com", method: "POST", outcome: "sent", status: 200 }) }),
    );
  });

  it("an argument that breaks the tool's JSON Schema is refused before anything is sent", async () => {
    const { key } = await createTenant();
    await api("POST", "/v1/tools", {
      key,
      body: { name: "weather", description: "w", inputSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false }, url: "https://tools.example.com/weather", riskLevel: "low", capability: "taskRead" },
    });
    const spy = vi.spyOn(globalThis, "fetch");
    const agent = await createAgent(key, { model: "builtin:playbook" });
    const sent = await api("POST", `/v1/agents/${agent.id}/messages`, { key, body: { text: '/tool http_weather {"town":"Berlin"}' } });
    await waitForRun(key, agent.id, sent.body.runKey);
    expect(spy).not.toHaveBeenCalled();
    const result = (await api("GET", `/v1/agents/${agent.id}/messages`, { key })).body.data.find((m: any) => m.kind === "toolResult");
    expect(result.content).toMatchObject({ ok: false, code: "invalid_arguments" });
  });
});
