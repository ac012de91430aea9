import { describe, expect, it } from "vitest";
import { CredentialCache } from "../../src/http/credential-cache";

describe("CredentialCache", () => {
  it("holds at most its cap, dropping the entry used longest ago", () => {
    const cache = new CredentialCache<number>(3);
    for (const [i, key] of ["a", "b", "c"].entries()) cache.set(key, i, 60_000, 0);
    expect(cache.get("a", 1)).toBe(0);
    cache.set("d", 3, 60_000, 2);
    expect(cache.size).toBe(3);
    expect(cache.get("b", 3)).toBeUndefined();
    expect([cache.get("a", 3), cache.get("c", 3), cache.get("d", 3)]).toEqual([0, 2, 3]);
    for (let i = 0; i < 1_000; i++) cache.set(`k${i}`, i, 60_000, 4);
    expect(cache.size).toBe(3);
  });

  it("expires entries at their TTL and answers a max-age question by when the entry was stored", () => {
    const cache = new CredentialCache<string>(10);
    cache.set("key", "grant", 1_000, 0);
    expect(cache.get("key", 400, 500)).toBe("grant");
    expect(cache.get("key", 600, 500)).toBeUndefined();
    expect(cache.get("key", 999)).toBe("grant");
    expect(cache.get("key", 1_000)).toBeUndefined();
  });
});
