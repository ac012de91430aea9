import type { Scope } from "../config";
import type { Env } from "../env";

/** Who is calling, resolved once by the auth middleware. */
export type Principal =
  | { kind: "apiKey"; tenantId: string; keyId: string; scopes: Scope[]; keyHash?: string }
  | { kind: "jwt"; tenantId: string; subject: string; scopes: Scope[]; agents: string[]; expiresAtMs?: number };

export interface AppEnv {
  Bindings: Env;
  Variables: { principal: Principal };
}

export const actorOf = (principal: Principal): string =>
  principal.kind === "apiKey" ? `key:${principal.keyId}` : `jwt:${principal.subject}`;
