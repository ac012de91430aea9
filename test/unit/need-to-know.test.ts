import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { allowlist, fieldPaths, guardPayload, isAllowed, project } from "../../src/core/egress/need-to-know";

const openai = allowlist("provider_inference_request", "openai_chat_completions");
const anthropic = allowlist("provider_inference_request", "anthropic_messages");

/** Request bodies exactly as the `ai` SDK providers build them (captured from @ai-sdk/openai-compatible and @ai-sdk/anthropic). */
const OPENAI_BODY = {
  model: "m1",
  messages: [
    { role: "system", content: "sys" },
    { role: "user", content: "hi" },
    { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "create_task", arguments: '{"title":"x"}' } }] },
    { role: "tool", tool_call_id: "call_1", content: '{"ok":true}' },
  ],
  tools: [{ type: "function", function: { name: "create_task", description: "d", parameters: { type: "object", properties: { title: { type: "string" } }, required: ["title"] } } }],
  tool_choice: "auto",
  stream: true,
  stream_options: { include_usage: true },
};

const ANTHROPIC_BODY = {
  model: "claude-x",
  max_tokens: 4096,
  system: [{ type: "text", text: "sys" }],
  messages: [
    { role: "user", content: [{ type: "text", text: "hi" }] },
    { role: "assistant", content: [{ type: "text", text: "ok" }, { type: "tool_use", id: "call_1", name: "create_task", input: { title: "x", nested: { deep: [1] } } }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "call_1", content: '{"ok":true}' }] },
  ],
  tools: [{ name: "create_task", description: "d", input_schema: { type: "object", properties: { title: { type: "string" } } }, eager_input_streaming: true }],
  tool_choice: { type: "auto" },
  stream: true,
};

describe("NEED_TO_KNOW allowlists", () => {
  it("lists leaf paths with [] for array elements", () => {
    expect(fieldPaths({ a: 1, b: { c: [{ d: "x" }, { e: null }] }, f: [], g: {} })).toEqual(["a", "b.c[].d", "b.c[].e", "f", "g"]);
  });

  it("passes an OpenAI chat completions request the SDK builds, untouched", () => {
    expect(guardPayload(OPENAI_BODY, openai)).toEqual({ ok: true });
    expect(project(OPENAI_BODY, openai)).toEqual({ payload: OPENAI_BODY, dropped: [] });
  });

  it("drops what the list does not name (the SDK's own extras included) and the guard then passes", () => {
    const { payload, dropped } = project(ANTHROPIC_BODY, anthropic);
    expect(dropped).toEqual(["tools[].eager_input_streaming"]);
    expect(guardPayload(payload, anthropic)).toEqual({ ok: true });
    expect(guardPayload(ANTHROPIC_BODY, anthropic)).toEqual({ ok: false, code: "overshared_payload_blocked", fields: ["tools[].eager_input_streaming"] });
  });

  it("blocks run metadata, ids and secrets smuggled into a request", () => {
    const leaky = { ...OPENAI_BODY, user: "tenant-1", metadata: { runKey: "abc" }, messages: [{ role: "user", content: "hi", name: "alice" }] };
    expect(guardPayload(leaky, openai)).toEqual({ ok: false, code: "overshared_payload_blocked", fields: ["messages[].name", "user", "metadata.runKey"] });
    const { payload, dropped } = project(leaky, openai);
    expect(dropped.sort()).toEqual(["messages[].name", "metadata", "user"]);
    expect(guardPayload(payload, openai)).toEqual({ ok: true });
  });

  it("treats a leaf entry that meets an object as a container to check field by field", () => {
    expect(guardPayload({ tool_choice: { type: "function", function: { name: "x" } } }, openai)).toEqual({ ok: true });
    expect(guardPayload({ tool_choice: { type: "function", secret: "k" } }, openai)).toMatchObject({ ok: false, fields: ["tool_choice.secret"] });
  });

  it("admits whole subtrees only under `.*` entries", () => {
    expect(isAllowed("tools[].function.parameters.properties.x.type", openai)).toBe(true);
    expect(isAllowed("tools[].function.parametersX", openai)).toBe(false);
    expect(isAllowed("messages[].content[].input.any.depth[]", anthropic)).toBe(true);
  });

  it("allows nothing for an unknown version or operation", () => {
    expect(allowlist("provider_inference_request", "openai_chat_completions", "ntk-0")).toEqual([]);
    expect(guardPayload({ model: "m" }, allowlist("provider_inference_request", "nope"))).toMatchObject({ ok: false, fields: ["model"] });
  });

  it("property: a projection always passes the guard, and never adds a field", () => {
    const json = fc.letrec((tie) => ({
      value: fc.oneof({ depthSize: "small" }, fc.string(), fc.integer(), fc.boolean(), fc.constant(null), fc.array(tie("value"), { maxLength: 3 }), tie("object")),
      object: fc.dictionary(fc.constantFrom("model", "messages", "role", "content", "tools", "function", "parameters", "x", "user", "type", "text"), tie("value"), { maxKeys: 4 }),
    }));
    fc.assert(
      fc.property(json.object, (payload) => {
        const { payload: projected } = project(payload, openai);
        expect(guardPayload(projected, openai)).toEqual({ ok: true });
        const before = new Set(fieldPaths(payload));
        for (const path of fieldPaths(projected)) expect(before.has(path) || [...before].some((p) => p.startsWith(`${path}.`) || p.startsWith(`${path}[]`))).toBe(true);
      }),
    );
  });
});
