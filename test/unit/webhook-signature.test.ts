import { createHmac, randomBytes } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  hmacSha256Hex,
  signVigil,
  timingSafeEqual,
  verifyWebhookSignature,
  WEBHOOK_TOLERANCE_SECONDS,
  type VerifyWebhookInput,
} from "../../src/core/egress/webhook-signature";

const SECRET = "whsec_test_secret";
const NOW_MS = 1_780_000_000_123;
const T = Math.floor(NOW_MS / 1000);
const BODY = '{"event":"task.created","id":"evt_1","note":"héllo"}';

/** Independent reference: node:crypto over the exact bytes the sender signs. */
function refHmac(secret: string, ...parts: Array<string | Uint8Array>): string {
  const mac = createHmac("sha256", secret);
  for (const part of parts) mac.update(part);
  return mac.digest("hex");
}

function verify(overrides: Partial<VerifyWebhookInput> & { header?: Record<string, string> }) {
  const { header = {}, ...rest } = overrides;
  return verifyWebhookSignature({ scheme: "vigil", headers: new Headers(header), rawBody: BODY, secrets: SECRET, nowMs: NOW_MS, ...rest });
}

describe("known answers (computed with node:crypto createHmac)", () => {
  it("signVigil is t=<t>,v1=HMAC(secret, `${t}.${body}`)", async () => {
    expect(await signVigil(SECRET, BODY, T)).toBe(`t=${T},v1=${refHmac(SECRET, `${T}.`, BODY)}`);
    expect(await hmacSha256Hex("key", "The quick brown fox jumps over the lazy dog")).toBe(
      "f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8",
    );
  });

  it("accepts a generic Vigil-Signature built independently", async () => {
    const header = { "vigil-signature": `t=${T},v1=${refHmac(SECRET, `${T}.`, BODY)}` };
    expect(await verify({ header })).toEqual({ ok: true, scheme: "vigil", timestamp: T });
  });

  it("accepts GitHub's documented example delivery", async () => {
    const result = await verifyWebhookSignature({
      scheme: "github",
      headers: new Headers({ "X-Hub-Signature-256": "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17" }),
      rawBody: "Hello, World!",
      secrets: "It's a Secret to Everybody",
      nowMs: NOW_MS,
    });
    expect(result).toEqual({ ok: true, scheme: "github", timestamp: null });
    expect(refHmac("It's a Secret to Everybody", "Hello, World!")).toBe("757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17");
  });

  it("accepts a Stripe-Signature, ignoring v0 and unknown keys", async () => {
    const header = `t=${T},v1=${refHmac(SECRET, `${T}.`, BODY)},v0=${"0".repeat(64)},foo=bar`;
    const result = await verify({ scheme: "stripe", header: { "Stripe-Signature": header } });
    expect(result).toEqual({ ok: true, scheme: "stripe", timestamp: T });
  });

  it("signs the raw bytes, even when they are not valid UTF-8", async () => {
    const raw = new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]);
    const header = { "Vigil-Signature": `t=${T},v1=${refHmac(SECRET, `${T}.`, raw)}` };
    expect((await verify({ rawBody: raw, header })).ok).toBe(true);
    expect(await verify({ rawBody: new TextDecoder().decode(raw), header })).toMatchObject({ ok: false, code: "signature_invalid" });
  });
});

describe("secret rotation", () => {
  it("passes when any v1 entry matches", async () => {
    const header = { "Vigil-Signature": `t=${T},v1=${refHmac("old", `${T}.`, BODY)},v1=${refHmac(SECRET, `${T}.`, BODY)}` };
    expect((await verify({ header })).ok).toBe(true);
  });

  it("passes when the header was signed with any configured secret", async () => {
    const header = { "Vigil-Signature": await signVigil("previous-secret", BODY, T) };
    expect((await verify({ header, secrets: [SECRET, "previous-secret"] })).ok).toBe(true);
    expect(await verify({ header, secrets: [SECRET] })).toMatchObject({ ok: false, code: "signature_invalid" });
  });
});

describe("rejections", () => {
  const good = async () => ({ "Vigil-Signature": await signVigil(SECRET, BODY, T) });

  it("signature_missing without the header", async () => {
    expect(await verify({})).toMatchObject({ ok: false, code: "signature_missing" });
    expect(await verify({ scheme: "github" })).toMatchObject({ ok: false, code: "signature_missing" });
    expect(await verify({ scheme: "github", header: { "X-Hub-Signature": "sha1=abc" } })).toMatchObject({ code: "signature_missing" });
  });

  it("signature_invalid for a tampered body, a wrong secret, a forged or altered signature", async () => {
    const header = await good();
    expect(await verify({ header, rawBody: BODY.replace("task", "tusk") })).toMatchObject({ code: "signature_invalid" });
    expect(await verify({ header, rawBody: BODY + " " })).toMatchObject({ code: "signature_invalid" });
    expect(await verify({ header, secrets: "another-secret" })).toMatchObject({ code: "signature_invalid" });
    expect(await verify({ header: { "Vigil-Signature": `t=${T},v1=${randomBytes(32).toString("hex")}` } })).toMatchObject({ code: "signature_invalid" });
    // Moving the timestamp breaks the signature, so t cannot be refreshed to dodge the replay window.
    const replayed = header["Vigil-Signature"].replace(`t=${T}`, `t=${T + 60}`);
    expect(await verify({ header: { "Vigil-Signature": replayed } })).toMatchObject({ code: "signature_invalid" });
    const github = { "X-Hub-Signature-256": `sha256=${refHmac(SECRET, BODY + "x")}` };
    expect(await verify({ scheme: "github", header: github })).toMatchObject({ code: "signature_invalid" });
  });

  it("timestamp_stale beyond 300 s in the past or the future; the boundary passes", async () => {
    const at = async (t: number) => verify({ header: { "Vigil-Signature": await signVigil(SECRET, BODY, t) } });
    expect(WEBHOOK_TOLERANCE_SECONDS).toBe(300);
    expect((await at(T - 300)).ok).toBe(true);
    expect((await at(T + 300)).ok).toBe(true);
    expect(await at(T - 301)).toMatchObject({ ok: false, code: "timestamp_stale" });
    expect(await at(T + 301)).toMatchObject({ ok: false, code: "timestamp_stale" });
    const stripe = { "Stripe-Signature": `t=${T - 3600},v1=${refHmac(SECRET, `${T - 3600}.`, BODY)}` };
    expect(await verify({ scheme: "stripe", header: stripe })).toMatchObject({ code: "timestamp_stale" });
  });

  it("a forged signature is signature_invalid even when its timestamp is also stale", async () => {
    const header = { "Vigil-Signature": `t=${T - 10_000},v1=${"ab".repeat(32)}` };
    expect(await verify({ header })).toMatchObject({ code: "signature_invalid" });
  });

  it.each([
    ["garbage"],
    [`v1=${"a".repeat(64)}`],
    [`t=${T}`],
    [`t=${T},v1=abc`],
    [`t=${T},v1=${"g".repeat(64)}`],
    [`t=soon,v1=${"a".repeat(64)}`],
    [`t=${T},t=${T},v1=${"a".repeat(64)}`],
    [`t=${T},${Array.from({ length: 9 }, () => `v1=${"a".repeat(64)}`).join(",")}`],
  ])("signature_malformed for Vigil-Signature %s", async (value) => {
    expect(await verify({ header: { "Vigil-Signature": value } })).toMatchObject({ ok: false, code: "signature_malformed" });
  });

  it.each([["sha1=" + "a".repeat(40)], ["sha256=" + "a".repeat(63)], ["a".repeat(64)]])("signature_malformed for X-Hub-Signature-256 %s", async (value) => {
    expect(await verify({ scheme: "github", header: { "X-Hub-Signature-256": value } })).toMatchObject({ code: "signature_malformed" });
  });

  it("refuses to verify without a secret (a configuration bug, not a request error)", async () => {
    await expect(verify({ header: await good(), secrets: [] })).rejects.toThrow(RangeError);
  });
});

describe("properties", () => {
  it("signVigil → verify round-trips for any secret, body and in-window skew", async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ minLength: 1 }), fc.uint8Array({ maxLength: 512 }), fc.integer({ min: -300, max: 300 }), async (secret, body, skew) => {
        const header = { "Vigil-Signature": await signVigil(secret, body, T + skew) };
        expect(await verify({ header, rawBody: body, secrets: secret })).toEqual({ ok: true, scheme: "vigil", timestamp: T + skew });
        expect((await signVigil(secret, body, T)).slice(-64)).toBe(refHmac(secret, `${T}.`, body));
      }),
      { numRuns: 100 },
    );
  });

  it("flipping any bit of the body is rejected", async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ minLength: 1, maxLength: 256 }), fc.nat(), fc.integer({ min: 0, max: 7 }), async (body, index, bit) => {
        const header = { "X-Hub-Signature-256": `sha256=${refHmac(SECRET, body)}` };
        const tampered = Uint8Array.from(body);
        tampered[index % body.length]! ^= 1 << bit;
        expect((await verify({ scheme: "github", header, rawBody: body })).ok).toBe(true);
        expect(await verify({ scheme: "github", header, rawBody: tampered })).toMatchObject({ code: "signature_invalid" });
      }),
      { numRuns: 100 },
    );
  });

  it("timingSafeEqual agrees with ordinary equality", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 40 }), fc.uint8Array({ maxLength: 40 }), (a, b) => {
        expect(timingSafeEqual(a, b)).toBe(Buffer.from(a).equals(Buffer.from(b)));
        expect(timingSafeEqual(a, Uint8Array.from(a))).toBe(true);
      }),
    );
  });
});
