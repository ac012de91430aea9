import { createHash, webcrypto } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalHash, canonicalJson, escapeField, H } from "../../src/core/ids/hash";
import { sha256Bytes, sha256Hex, toHex } from "../../src/core/ids/sha256";

describe("sha256Hex", () => {
  it("matches the known vectors", () => {
    expect(sha256Hex("")).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    expect(sha256Hex("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  });

  it("agrees with node:crypto on any unicode text, including multi-block inputs", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 300 }), (text) => {
        expect(sha256Hex(text)).toBe(createHash("sha256").update(text, "utf8").digest("hex"));
      }),
    );
  });

  it("reuses its scratch space exactly: inputs across the buffer's growth and past its kept size, strings and bytes, interleaved", () => {
    const node = (input: string | Uint8Array) => createHash("sha256").update(input).digest("hex");
    // 1 024 is the initial scratch size, 64 KiB the largest kept; 55/56/63/64 bytes straddle the one-block padding edge.
    const sizes = [0, 1, 55, 56, 63, 64, 119, 120, 340, 341, 1_000, 5_000, 21_000, 70_000, 200_000, 3];
    for (const size of sizes) {
      const text = "é€😀x".repeat(Math.ceil(size / 4)).slice(0, size);
      const bytes = new TextEncoder().encode(text);
      expect(sha256Hex(text), `text of ${size}`).toBe(node(text));
      expect(sha256Hex(bytes), `bytes of ${size}`).toBe(node(bytes));
      expect(toHex(sha256Bytes(text)), `bytes out of ${size}`).toBe(node(text));
      // A short input right after a long one: nothing of the long one's bytes may leak into its padding.
      expect(sha256Hex("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    }
  });

  it("agrees with WebCrypto", async () => {
    const digest = await webcrypto.subtle.digest("SHA-256", new TextEncoder().encode("vigil"));
    expect(sha256Hex("vigil")).toBe(Buffer.from(digest).toString("hex"));
  });
});

describe("H", () => {
  it("is lowercase hex SHA-256 of v1| + escaped fields joined by |", () => {
    expect(H("a", "b")).toBe(createHash("sha256").update("v1|a|b").digest("hex"));
    expect(H("a|b")).toBe(createHash("sha256").update("v1|a\\|b").digest("hex"));
    expect(H()).toBe(createHash("sha256").update("v1|").digest("hex"));
    expect(H("a\\b|c", 7)).toBe(createHash("sha256").update("v1|a\\\\b\\|c|7").digest("hex"));
  });

  it("never collides when a | moves between fields", () => {
    expect(H("a|b", "c")).not.toBe(H("a", "b|c"));
    expect(H("a\\", "|b")).not.toBe(H("a\\|", "b"));
  });

  it("is injective on field lists (escaping is reversible)", () => {
    fc.assert(
      fc.property(fc.array(fc.string(), { maxLength: 5 }), fc.array(fc.string(), { maxLength: 5 }), (a, b) => {
        const same = a.length === b.length && a.every((field, i) => field === b[i]);
        const joinedA = a.map(escapeField).join("|");
        const joinedB = b.map(escapeField).join("|");
        if (!same && a.length === b.length) expect(joinedA).not.toBe(joinedB);
        if (same) expect(H(...a)).toBe(H(...b));
      }),
    );
  });
});

describe("canonicalJson", () => {
  it("sorts keys at every depth and drops undefined members", () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { z: 1, y: 2 }], c: undefined } })).toBe('{"a":{"d":[1,{"y":2,"z":1}]},"b":1}');
  });

  it("hashes equal for any key order", () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (object) => {
        const reversed = Object.fromEntries(Object.entries(object).reverse());
        expect(canonicalHash(reversed)).toBe(canonicalHash(object));
      }),
    );
  });
});
