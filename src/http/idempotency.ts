import { keyringFromEnv, type Keyring } from "../core/egress/keyring";
import type { Context, MiddlewareHandler } from "hono";
import { canonicalJson, H } from "../core/ids/hash";
import { createSecretBox, SECRET_PURPOSES, type SecretBox } from "../core/egress/secret-box";
import { sha256Hex } from "../core/ids/sha256";
import { ApiError } from "./api-error";
import { tenantStub } from "./auth";
import type { AppEnv } from "./context";

const KEY_PATTERN = /^[A-Za-z0-9_.:-]{1,128}$/;

/** The request's Idempotency-Key, validated; undefined when absent. */
export function idempotencyKeyOf(header: string | undefined): string | undefined {
  if (header !== undefined && !KEY_PATTERN.test(header)) throw new ApiError("validation_failed", "Idempotency-Key must be 1-128 characters of A-Z a-z 0-9 _ . : -");
  return header;
}

/**
 * The id a create under an Idempotency-Key gives its object, so that a retry after a lapsed claim (or after a
 * crash between the write and the stored answer) finds what the first attempt wrote instead of writing a second
 * object: `prefix + H("idempotent-create", tenant, "METHOD /path", key, canonicalJson(body))`, cut to `length`
 * hex characters. The body is part of it so a key reused with another body after its record's retention creates
 * afresh. Undefined without a key: the caller mints a random id.
 */
export function requestKeyedId(c: Context<AppEnv>, tenantId: string, prefix: string, body: unknown, length = 20): string | undefined {
  const key = idempotencyKeyOf(c.req.header("idempotency-key"));
  if (key === undefined) return undefined;
  const scope = `${c.req.method} ${new URL(c.req.url).pathname}`;
  return `${prefix}${H("idempotent-create", tenantId, scope, key, canonicalJson(body ?? null)).slice(0, length)}`;
}

let boxes: { masterKey: Keyring; box: SecretBox } | undefined;
function answerBox(masterKey: Keyring): SecretBox {
  // One derived key per isolate (HKDF once), re-derived only if the master key changes.
  if (boxes?.masterKey !== masterKey) boxes = { masterKey, box: createSecretBox(masterKey, SECRET_PURPOSES.idempotentSecretAnswer) };
  return boxes.box;
}

/**
 * `Idempotency-Key` on creating POSTs: the first response is stored and replayed for the same key
 * and body; a different body under the same key is a 409. Streaming responses are not stored —
 * their runKey is derived from the key, so a retry dedupes in the agent's inbox instead.
 *
 * `sealed`: the answer carries a secret shown once (a new API key, a widget token). It is stored only
 * sealed (AES-GCM, bound to tenant, route and key), so the idempotency table never holds the plaintext,
 * and a retry of the same request still gets the answer it lost.
 */
export function idempotent(options: { storeIn?: (c: Parameters<MiddlewareHandler<AppEnv>>[0]) => string; sealed?: boolean } = {}): MiddlewareHandler<AppEnv> {
  return async function idempotencyGuard(c, next) {
    const key = idempotencyKeyOf(c.req.header("idempotency-key"));
    if (key === undefined) return next();
    const tenantId = options.storeIn ? options.storeIn(c) : c.get("principal").tenantId;
    const stub = tenantStub(c.env, tenantId);
    const scope = `${c.req.method} ${new URL(c.req.url).pathname}`;
    const requestHash = sha256Hex(`${scope}\n${c.req.header("accept") ?? ""}\n${await c.req.text()}`);
    const begun = await stub.idempotencyBegin(scope, key, requestHash);
    if (begun.state === "conflict") throw new ApiError("idempotency_conflict", "this Idempotency-Key was used with a different request body");
    if (begun.state === "in_progress") throw new ApiError("idempotency_in_progress", "a request with this Idempotency-Key is still in progress", { retryAfterSeconds: 1 });
    const context = `${tenantId}\n${scope}\n${key}`;
    if (begun.state === "replay") {
      let body = begun.body;
      if (options.sealed) {
        const opened = await answerBox(keyringFromEnv(c.env)).open(body, context);
        // Only a changed master key gets here: the secret cannot be shown again, and the claim stays (no second effect).
        if (!opened.ok) throw new ApiError("idempotency_conflict", "the first answer to this Idempotency-Key held a secret that can no longer be shown; list or revoke what it created, then retry with a new Idempotency-Key");
        body = opened.secret;
      }
      return new Response(body, { status: begun.status, headers: { "content-type": "application/json", "idempotent-replayed": "true" } });
    }
    try {
      await next();
    } catch (error) {
      await stub.idempotencyAbort(scope, key);
      throw error;
    }
    const contentType = c.res.headers.get("content-type") ?? "";
    if (c.res.status < 500 && contentType.includes("json") && !c.error) {
      const text = await c.res.clone().text();
      await stub.idempotencyComplete(scope, key, c.res.status, options.sealed ? await answerBox(keyringFromEnv(c.env)).seal(text, context) : text);
    } else {
      await stub.idempotencyAbort(scope, key);
    }
  };
}
