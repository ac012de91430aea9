import { sseFrame } from "../core/runtime/sse";

/** Why a credential-guarded stream ended: the final `stream.closed` event's `reason`. */
export type StreamEndReason = "key_revoked" | "token_expired";

export interface StreamGuard {
  /** The credential's expiry (a widget token's `exp`), if it has one. */
  expiresAtMs?: number | undefined;
  /** Re-checks the credential (an API key: still active?) every `recheckMs`. */
  stillValid?: (() => Promise<boolean>) | undefined;
  recheckMs: number;
  /** Lets the revoking code end the stream at once; returns the unregister function. */
  register?: ((end: (reason: StreamEndReason) => void) => () => void) | undefined;
}

const encoder = new TextEncoder();

/**
 * Pipes a Durable Object's SSE body to the client until its credential ends: then a final
 * `event: stream.closed` with `{reason}` and the end of the stream (the upstream subscription is cancelled). A client
 * that reconnects with the same credential gets 401. A client that goes away cancels the upstream the same way.
 */
export function guardStream(upstream: ReadableStream<Uint8Array>, guard: StreamGuard): ReadableStream<Uint8Array> {
  const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
  const writer = writable.getWriter();
  const reader = upstream.getReader();
  let ended = false;
  let expiry: ReturnType<typeof setTimeout> | undefined;
  let recheckTimer: ReturnType<typeof setTimeout> | undefined;
  let unregister: () => void = () => undefined;

  const end = async (reason?: StreamEndReason): Promise<void> => {
    if (ended) return;
    ended = true;
    if (expiry !== undefined) clearTimeout(expiry);
    if (recheckTimer !== undefined) clearTimeout(recheckTimer);
    unregister();
    if (reason) await writer.write(encoder.encode(sseFrame({ event: "stream.closed", data: { type: "stream.closed", reason } }))).catch(() => undefined);
    await reader.cancel().catch(() => undefined);
    await writer.close().catch(() => undefined);
  };

  void (async () => {
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done || ended) break;
        await writer.write(value);
      }
    } catch {
      // the client went away (write failed) or the upstream broke: end both sides
    }
    await end();
  })();

  if (guard.expiresAtMs !== undefined) expiry = setTimeout(() => void end("token_expired"), Math.max(0, guard.expiresAtMs - Date.now()));
  if (guard.stillValid) {
    const check = guard.stillValid;
    const recheck = (): void => {
      if (ended) return;
      recheckTimer = setTimeout(() => {
        void check()
          .then((valid) => (valid ? recheck() : end("key_revoked")))
          .catch(() => recheck());
      }, guard.recheckMs);
    };
    recheck();
  }
  if (guard.register) unregister = guard.register((reason) => void end(reason));
  return readable;
}
