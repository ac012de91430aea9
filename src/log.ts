/**
 * Structured JSON log lines with a deployment-wide threshold (`VIGIL_LOG_LEVEL`: debug | info | warn |
 * error; default info). Fields carry ids and counts, never message bodies or secrets.
 */
const LEVELS = { debug: 10, info: 20, warn: 30, error: 40 } as const;
export type LogLevel = keyof typeof LEVELS;

let minimum: number = LEVELS.info;

/** Called where the runtime hands us `env` (worker handlers, Durable Object constructors). */
export function configureLogging(level: string | undefined): void {
  minimum = level !== undefined && level in LEVELS ? LEVELS[level as LogLevel] : LEVELS.info;
}

export function logEvent(level: LogLevel, msg: string, fields: Record<string, unknown> = {}): void {
  if (LEVELS[level] < minimum) return;
  const line = JSON.stringify({ level, msg, ...fields });
  if (level === "error") console.error(line);
  else if (level === "warn") console.warn(line);
  else console.log(line);
}
