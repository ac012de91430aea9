import { createCipheriv, hkdfSync } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { keyVersion } from "../../src/core/egress/keyring";
import { createSecretBox, fromBase64Url, SECRET_PURPOSES, toBase64Url } from "../../src/core/egress/secret-box";

const MASTER = "dGVzdC1tYXN0ZXIta2V5LTMyLWJ5dGVzLWxvbmctISE=";
const PURPOSE = SECRET_PURPOSES.webhookSourceSecret;

/** Flips one bit of one base64url-encoded part of a sealed string. */
function flip(sealed: string, part: 2 | 3, byteIndex = 0): string {
  const parts = sealed.split(".");
  const raw = fromBase64Url(parts[part]!)!;
  raw[byteIndex % raw.length]! ^= 0x01;
  parts[part] = toBase64Url(raw);
  return parts.join(".");
}

describe("secret-box", () => {
  it("seals to v2.<key version>.<12-byte iv>.<ciphertext+tag> and opens back", async () => {
    const box = createSecretBox(MASTER, PURPOSE);
    const sealed = await box.seal("whsec_héllo", "ws_1");
    expect(sealed).toMatch(new RegExp(`^v2\\.${keyVersion(MASTER)}\\.[A-Za-z0-9_-]{16}\\.[A-Za-z0-9_-]+$`));
    expect(fromBase64Url(sealed.split(".")[2]!)!.length).toBe(12);
    expect(fromBase64Url(sealed.split(".")[3]!)!.length).toBe(new TextEncoder().encode("whsec_héllo").length + 16);
    expect(sealed).not.toContain("whsec");
    expect(await box.open(sealed, "ws_1")).toEqual({ ok: true, secret: "whsec_héllo", current: true });
  });

  it("still opens a legacy v1.<iv>.<ciphertext> value (no key version), made by node:crypto, and calls it not current", async () => {
    const iv = Buffer.alloc(12, 7);
    const key = Buffer.from(hkdfSync("sha256", Buffer.from(MASTER), Buffer.from("vigil/secret-box/hkdf-salt/v1"), Buffer.from(PURPOSE), 32));
    const cipher = createCipheriv("aes-256-gcm", key, iv);
    cipher.setAAD(Buffer.from("v1|ctx"));
    const ct = Buffer.concat([cipher.update("legacy"), cipher.final(), cipher.getAuthTag()]);
    const legacy = `v1.${toBase64Url(iv)}.${toBase64Url(ct)}`;
    expect(await createSecretBox(MASTER, PURPOSE).open(legacy, "ctx")).toEqual({ ok: true, secret: "legacy", current: false });
  });

  it("matches an independent node:crypto HKDF-SHA-256 + AES-256-GCM implementation", async () => {
    const box = createSecretBox(MASTER, PURPOSE);
    const sealed = await box.seal("s3cret", "ctx");
    const [, , ivText, ctText] = sealed.split(".");
    const iv = Buffer.from(fromBase64Url(ivText!)!);
    const key = Buffer.from(hkdfSync("sha256", Buffer.from(MASTER), Buffer.from("vigil/secret-box/hkdf-salt/v1"), Buffer.from(PURPOSE), 32));
    const cipher = createCipheriv("aes-256-gcm", key, iv);
    cipher.setAAD(Buffer.from("v2|ctx"));
    const expected = Buffer.concat([cipher.update("s3cret"), cipher.final(), cipher.getAuthTag()]);
    expect(toBase64Url(fromBase64Url(ctText!)!)).toBe(toBase64Url(expected));
  });

  it("uses a fresh random IV per seal", async () => {
    const box = createSecretBox(MASTER, PURPOSE);
    const seals = await Promise.all(Array.from({ length: 20 }, () => box.seal("same")));
    expect(new Set(seals).size).toBe(20);
    expect(new Set(seals.map((s) => s.split(".")[2])).size).toBe(20);
  });

  it("rejects a tampered ciphertext, tag or IV as a failure value, never a throw", async () => {
    const box = createSecretBox(MASTER, PURPOSE);
    const sealed = await box.seal("top secret", "ws_1");
    for (const tampered of [flip(sealed, 3, 0), flip(sealed, 3, 9999), flip(sealed, 2, 3)]) {
      expect(await box.open(tampered, "ws_1")).toMatchObject({ ok: false, code: "secret_undecryptable" });
    }
  });

  it("binds the context: a ciphertext moved to another row does not open", async () => {
    const box = createSecretBox(MASTER, PURPOSE);
    const sealed = await box.seal("top secret", "ws_1");
    expect(await box.open(sealed, "ws_2")).toMatchObject({ ok: false, code: "secret_undecryptable" });
    expect(await box.open(sealed)).toMatchObject({ ok: false, code: "secret_undecryptable" });
  });

  it("separates purposes and master keys", async () => {
    const sealed = await createSecretBox(MASTER, PURPOSE).seal("k", "x");
    expect(await createSecretBox(MASTER, SECRET_PURPOSES.providerSecret).open(sealed, "x")).toMatchObject({ ok: false, code: "secret_undecryptable" });
    expect(await createSecretBox("another-master-key-that-is-long-enough", PURPOSE).open(sealed, "x")).toMatchObject({ ok: false, code: "secret_undecryptable" });
  });

  it("reports malformed and unknown-version input by code", async () => {
    const box = createSecretBox(MASTER, PURPOSE);
    const sealed = await box.seal("k");
    expect(await box.open("not sealed")).toMatchObject({ ok: false, code: "secret_malformed" });
    expect(await box.open("v1.a.b.c")).toMatchObject({ ok: false, code: "secret_malformed" });
    expect(await box.open("v1.!!!!.AAAA")).toMatchObject({ ok: false, code: "secret_malformed" });
    const [, kid, iv, ct] = sealed.split(".");
    expect(await box.open(`v2.${kid}.${toBase64Url(new Uint8Array(8))}.${ct}`)).toMatchObject({ ok: false, code: "secret_malformed" });
    expect(await box.open(`v2.${kid}.${iv}.AAAA`)).toMatchObject({ ok: false, code: "secret_malformed" });
    expect(await box.open(`v2.00000000.${iv}.${ct}`)).toMatchObject({ ok: false, code: "secret_undecryptable" });
    expect(await box.open(sealed.replace(/^v2/, "v3"))).toMatchObject({ ok: false, code: "secret_version_unsupported" });
  });

  it("refuses an empty master key (a configuration bug) and oversized secrets", async () => {
    await expect(createSecretBox("", PURPOSE).seal("k")).rejects.toThrow(/VIGIL_MASTER_KEY/);
    // Never a key derived from the text "undefined" or from a short secret: both fail closed.
    await expect(createSecretBox(undefined as unknown as string, PURPOSE).seal("k")).rejects.toThrow(/server_misconfigured: VIGIL_MASTER_KEY is not set/);
    await expect(createSecretBox("x".repeat(31), PURPOSE).seal("k")).rejects.toThrow(/shorter than 32 characters/);
    await expect(createSecretBox(MASTER, PURPOSE).seal("x".repeat(8193))).rejects.toThrow(RangeError);
  });

  it("round-trips any string in any context (property)", async () => {
    const box = createSecretBox(MASTER, PURPOSE);
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 200 }), fc.string({ maxLength: 40 }), async (secret, context) => {
        expect(await box.open(await box.seal(secret, context), context)).toEqual({ ok: true, secret, current: true });
      }),
      { numRuns: 100 },
    );
  });
});
