/**
 * Message provenance (seed 004 "Message Envelope", "Authority Classes And Compatibility Trust"): every input a run
 * reads carries an authority class, a trust level and an origin kind, derived here from what admitted it — the
 * verified credential of a turn, or the runtime path of any other wake — and never from anything the caller sends.
 * The enum names are the seed's.
 */
import type { WakeReason } from "../ids/run-keys";

/** How the runtime treats the content: instruction, signal or evidence. */
export const AUTHORITIES = ["operator_instruction", "external_evidence", "runtime_instruction"] as const;
export type Authority = (typeof AUTHORITIES)[number];

/** The seed's compatibility trust label, kept beside the authority class. */
export const TRUST_LEVELS = ["trusted_operator", "trusted_system", "trusted_integration", "untrusted_external"] as const;
export type TrustLevel = (typeof TRUST_LEVELS)[number];

/** The seed's `MessageOrigin` kinds (the source identity, without its ids). */
export const ORIGIN_KINDS = ["operator", "channel", "webhook", "callback", "timer", "system", "task"] as const;
export type OriginKind = (typeof ORIGIN_KINDS)[number];

export interface Provenance {
  authority: Authority;
  trust: TrustLevel;
  origin: OriginKind;
}

/** The verified credential a user turn arrived with: a tenant API key, or an end user's token (widget or tenant IdP). */
export type TurnCredential = "apiKey" | "jwt";

const OPERATOR: Provenance = { authority: "operator_instruction", trust: "trusted_operator", origin: "operator" };
const CHANNEL: Provenance = { authority: "external_evidence", trust: "untrusted_external", origin: "channel" };
const INTEGRATION: Provenance = { authority: "external_evidence", trust: "trusted_integration", origin: "webhook" };
const RUNTIME: Provenance = { authority: "runtime_instruction", trust: "trusted_system", origin: "system" };

/**
 * A user turn's provenance from its credential: an API key speaks for the operator; an end user's token is channel
 * input (`untrusted_external`): it may shape the plan but never inherits operator authority.
 */
export function turnProvenance(credential: TurnCredential): Provenance {
  return credential === "apiKey" ? OPERATOR : CHANNEL;
}

/** The authority a turn's credential admits it with (what the wake inbox stores). */
export const turnAuthority = (credential: TurnCredential): Authority => turnProvenance(credential).authority;

/**
 * Any wake's provenance from its stored authority and reason (both fixed by the admitting path); the authority is
 * kept as stored. A user turn is the operator's or a channel's; webhook and event payloads are integration evidence;
 * timers and catch-up are the timer's; an operator's answer is the operator's; other answers and child reports rejoin
 * as tasks (a visitor's answer stays untrusted); everything else is the runtime's.
 */
export function wakeProvenance(authority: Authority, reason: WakeReason): Provenance {
  const external = authority === "external_evidence";
  if (reason === "userInitiated") return authority === "operator_instruction" ? OPERATOR : external ? CHANNEL : RUNTIME;
  if (reason === "timer" || reason === "recoveryCatchup") return { ...RUNTIME, authority, origin: "timer" };
  if (reason === "toolResult") {
    if (authority === "operator_instruction") return OPERATOR;
    return { authority, trust: external ? "untrusted_external" : "trusted_system", origin: "task" };
  }
  if (reason === "child") return { authority, trust: "trusted_system", origin: "task" };
  if (authority === "operator_instruction") return OPERATOR;
  return external ? INTEGRATION : RUNTIME;
}

/** Input that may influence planning but must never invoke a tool or approve one on its own. */
export const isUntrusted = (provenance: Provenance): boolean => provenance.trust === "untrusted_external";

/** A person answering a decision: an API key is the operator; an end user's token is a visitor. */
export const answererProvenance = turnProvenance;
