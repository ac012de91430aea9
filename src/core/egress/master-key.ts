/**
 * The deployment's master secret (`VIGIL_MASTER_KEY`): every sealed secret, trigger token and widget
 * JWT key is derived from it. It fails closed: missing, empty or shorter than
 * `MIN_MASTER_KEY_LENGTH` characters and nothing is derived at all — never a key over "" or over the
 * text "undefined", which anyone could compute from the source. `npm start` generates 44 characters
 * (base64 of 32 random bytes); docs/operations.md shows how to make one for a deployment.
 */
export const MIN_MASTER_KEY_LENGTH = 32;

/** Thrown where a key would be derived from an unusable master key; the edge answers 503 `server_misconfigured`. */
export class MasterKeyMissingError extends Error {
  override readonly name = "MasterKeyMissingError";
  constructor(reason: string) {
    super(`server_misconfigured: ${reason}`);
  }
}

/** Why `value` cannot be the master key, or null when it can. */
export function masterKeyProblem(value: unknown): string | null {
  if (typeof value !== "string" || value === "") return "VIGIL_MASTER_KEY is not set";
  if (value.length < MIN_MASTER_KEY_LENGTH) return `VIGIL_MASTER_KEY is shorter than ${MIN_MASTER_KEY_LENGTH} characters`;
  return null;
}

/** The master key, or a `MasterKeyMissingError`. */
export function requireMasterKey(value: unknown): string {
  const problem = masterKeyProblem(value);
  if (problem !== null) throw new MasterKeyMissingError(problem);
  return value as string;
}

/** Whether an error (possibly re-thrown across a Durable Object RPC boundary, which keeps only the message) is a missing master key. */
export function isMasterKeyMissing(error: unknown): boolean {
  return error instanceof MasterKeyMissingError || (error instanceof Error && error.message.startsWith("server_misconfigured: "));
}
