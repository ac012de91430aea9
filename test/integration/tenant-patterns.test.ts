import { describe, expect, it } from "vitest";
import { api, createAgent, createTenant, waitForRun } from "./helpers";

/**
 * A playbook pattern with overlapping alternatives under a star, fed a 65-character message, would freeze a
 * backtracking engine and with it the whole server. Patterns run on RE2 (linear time): the hostile run completes, and another
 * tenant, another agent and /healthz answer meanwhile.
 */
describe("tenant regular expressions cannot stall anyone", () => {
  const hostile = ["^(a|aa)*$", "^(a+)+$", "(x+x+)+y", "^(\\w*)*$"];

  it("classic exponential patterns against long inputs: the runs complete and other tenants keep answering", async () => {
    const attacker = await createTenant("attacker");
    const bystander = await createTenant("bystander");
    const agent = await createAgent(attacker.key, {
      model: "builtin:playbook",
      playbook: { rules: hostile.map((textPattern, index) => ({ when: { textPattern }, reply: `rule ${index}` })), fallbackReply: "no rule matched" },
    });
    const other = await createAgent(bystander.key);
    const texts = ["a".repeat(65) + "!", "a".repeat(5_000) + "!", "x".repeat(5_000)];
    const sent = await Promise.all(texts.map((text) => api("POST", `/v1/agents/${agent.id}/messages`, { key: attacker.key, body: { text } })));
    expect(sent.map((res) => res.status)).toEqual([202, 202, 202]);
    // While those runs are queued or running, everyone else is served.
    expect((await api("GET", "/healthz")).status).toBe(200);
    const reply = await api("POST", `/v1/agents/${other.id}/messages`, { key: bystander.key, body: { text: "still there?" } });
    expect(reply.status).toBe(202);
    expect((await waitForRun(bystander.key, other.id, reply.body.runKey)).status).toBe("completed");
    for (const res of sent) expect((await waitForRun(attacker.key, agent.id, res.body.runKey)).status).toBe("completed");
    const replies = (await api("GET", `/v1/agents/${agent.id}/messages?limit=200`, { key: attacker.key })).body.data.filter((m: any) => m.kind === "assistant").map((m: any) => m.text);
    // "a…a!" matches none of the anchored alternatives; "x…x" has no y but is all word characters (rule 3).
    expect(replies.sort()).toEqual(["no rule matched", "no rule matched", "rule 3"]);
  }, 60_000);

  it("refuses at creation, naming the field, what the linear-time engine cannot express", async () => {
    const { key } = await createTenant();
    for (const textPattern of ["(a)\\1", "foo(?=bar)", "(?<!x)y"]) {
      const res = await api("POST", "/v1/agents", { key, body: { kind: "coach", displayName: "C", model: "builtin:playbook", playbook: { rules: [{ when: { textPattern }, reply: "x" }] } } });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe("validation_failed");
      expect(res.body.errors).toEqual([{ path: "playbook.rules.0.when.textPattern", message: expect.stringContaining("backreferences and lookaround are not supported") }]);
    }
  });
});
