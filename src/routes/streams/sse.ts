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
