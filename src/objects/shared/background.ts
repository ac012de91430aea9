/**
 * Runs `work` on a macrotask, kept alive by `waitUntil`, so it never holds back the reply that
 * started it (workerd would otherwise run an all-microtask job before answering). Failures go to
 * `failed`, never to the caller.
 */
export function inBackground(waitUntil: (work: Promise<unknown>) => void, work: () => unknown, failed: (error: unknown) => void): void {
  waitUntil(new Promise((resolve) => setTimeout(resolve, 0)).then(work).catch(failed));
}

/** A structured error log line without message bodies. */
export function logFailure(msg: string, error: unknown): void {
  console.error(JSON.stringify({ level: "error", msg, error: String(error) }));
}
