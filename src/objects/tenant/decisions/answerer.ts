import { answererProvenance, type Provenance } from "../../../core/wakes/provenance";

/**
 * The provenance of a decision's answer from the actor the resolve route records (`key:<keyId>` for an API key,
 * `jwt:<subject>` for an end user's token); anything else (timeouts, the system) is the runtime.
 */
export function answererOf(actor: string): Provenance {
  if (actor.startsWith("key:")) return answererProvenance("apiKey");
  if (actor.startsWith("jwt:")) return answererProvenance("jwt");
  return { authority: "runtime_instruction", trust: "trusted_system", origin: "system" };
}

/** The answerer's provenance as an audit row records it (seed 004: authority labels reach audit records). */
export function answeredBy(actor: string): { authority: Provenance["authority"]; trust: Provenance["trust"] } {
  const { authority, trust } = answererOf(actor);
  return { authority, trust };
}
