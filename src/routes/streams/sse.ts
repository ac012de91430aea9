import { z } from "@hono/zod-openapi";

/** Wraps a DO-produced SSE byte stream as the HTTP response. */
export function sseResponse(stream: ReadableStream<Uint8Array>, extraHeaders: Record<string, string> = {}): Response {
  return new Response(stream, {
    status: 200,
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache, no-transform",
      connection: "keep-alive",
      "x-accel-buffering": "no",
      ...extraHeaders,
    },
  });
}

/**
 * The same frames as unnamed events: each frame's `event:` line is dropped, so an EventSource `onmessage` handler
 * receives every frame once, as a `message` event whose JSON `data` still carries its `type` (`?format=message`).
 * Ids, comments (heartbeats) and data pass unchanged; frames split across chunks are rejoined first.
 */
export function asMessageEvents(stream: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let pending = "";
  const unnamed = (frames: string) => frames.replace(/^event: [^\n]*\n/gm, "");
  return stream.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        pending += decoder.decode(chunk, { stream: true });
        const end = pending.lastIndexOf("\n\n");
        if (end === -1) return;
        controller.enqueue(encoder.encode(unnamed(pending.slice(0, end + 2))));
        pending = pending.slice(end + 2);
      },
      flush(controller) {
        if (pending) controller.enqueue(encoder.encode(unnamed(pending)));
      },
    }),
  );
}

/** `?format=message` on an event stream route. */
export const StreamFormat = {
  format: z.enum(["named", "message"]).optional().openapi({
    description: "`message`: every frame as an unnamed event (EventSource `onmessage`), its `type` in the JSON data; default `named` (`event: <type>`)",
  }),
};
