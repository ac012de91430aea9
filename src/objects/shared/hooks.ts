/**
 * A named piece of activation or alarm work (after the Agents SDK's capability runner, whose
 * capabilities contribute `onStart`/`onAlarm`): the wiring lists them, so a reader sees in one
 * place what runs when an object wakes up or its alarm fires.
 */
export interface Hook {
  name: string;
  run(): void | Promise<unknown>;
}

/** Runs the hooks in order, each awaited; a failure propagates to the caller as before (the runtime retries or resets). */
export async function runHooks(hooks: readonly Hook[]): Promise<void> {
  for (const hook of hooks) await hook.run();
}
